import type { AddressInfo } from 'node:net';
import { connect, createServer, type Socket } from 'node:net';

export interface LoadBalancer {
  /** `http://127.0.0.1:<port>`: the public URL clients use. */
  readonly url: string;
  /** Where new connections go from now on (an origin, `http://host:port`). */
  forwardTo(origin: string): void;
  close(): Promise<void>;
}

/**
 * A TCP load balancer on loopback in front of gateways on other hosts: each connection is passed through
 * unchanged (Host header included) to the origin `forwardTo` names. It gives a test of several hosts one public
 * URL on loopback, where the authorization server allows plain HTTP, whatever addresses the hosts have. Before
 * `forwardTo`, connections are closed at once.
 */
export async function startLoadBalancer(): Promise<LoadBalancer> {
  let target: URL | undefined;
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };
  const server = createServer((incoming) => {
    track(incoming);
    if (target === undefined) {
      incoming.destroy();
      return;
    }
    const outgoing = connect({ host: target.hostname, port: Number(target.port) });
    track(outgoing);
    incoming.pipe(outgoing).pipe(incoming);
    // Either side failing or hanging up ends the other.
    incoming.on('error', () => outgoing.destroy());
    outgoing.on('error', () => incoming.destroy());
    incoming.on('close', () => outgoing.destroy());
    outgoing.on('close', () => incoming.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwardTo(origin) {
      target = new URL(origin);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
