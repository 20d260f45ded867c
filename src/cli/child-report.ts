/**
 * What a child of `portcullis up` tells it over the Node IPC channel `up` opens (`process.send`). A child binds
 * port 0 itself and reports the port it got, so no port is chosen by one process and bound by another (another
 * child could take it in between).
 */
export interface ListeningReport {
  readonly kind: 'listening';
  readonly port: number;
}

/** What `up` tells the service once Envoy has bound the gateway listener: where tool calls go. */
export interface GatewayUrlMessage {
  readonly kind: 'gateway-url';
  readonly url: string;
}

/** Tells `up` (when this process runs under it with an IPC channel) which port it listens on. */
export function reportListening(port: number): void {
  process.send?.({ kind: 'listening', port } satisfies ListeningReport);
}

export function isListeningReport(message: unknown): message is ListeningReport {
  const candidate = message as Partial<ListeningReport> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate.kind === 'listening' &&
    Number.isInteger(candidate.port) &&
    candidate.port! > 0 &&
    candidate.port! <= 65535
  );
}

/** Resolves with the gateway URL `up` sends (see GatewayUrlMessage); rejects when the channel closes first. */
export function gatewayUrlFromParent(): Promise<string> {
  return new Promise((resolve, reject) => {
    if (!process.connected) return reject(new Error('no IPC channel to up: pass --gateway-url'));
    const done = () => {
      process.off('message', listener);
      process.off('disconnect', gone);
    };
    const listener = (message: unknown) => {
      const candidate = message as Partial<GatewayUrlMessage> | null;
      if (typeof candidate !== 'object' || candidate?.kind !== 'gateway-url') return;
      if (typeof candidate.url !== 'string') return;
      done();
      resolve(candidate.url);
    };
    const gone = () => {
      done();
      reject(new Error('up went away before it sent the gateway URL'));
    };
    process.on('message', listener);
    process.on('disconnect', gone);
  });
}
