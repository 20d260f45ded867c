import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A small private network made of Linux network namespaces, for tests that need real addresses and routing (root
 * and iproute2 required). Every address lives inside these namespaces only; nothing is added to the host's own
 * namespace, and `remove()` deletes the namespaces, their interfaces and their processes.
 *
 * ```
 *  client 192.168.77.2 ──(the "Internet")── 192.168.77.1 gateway 10.77.1.4 ──(gateway subnet)── 10.77.1.1 router
 *                                                                                                    │ 10.77.0.1
 *                                                                     (resource subnet, a bridge)────┤
 *                                                                        backend 10.77.0.4, insider 10.77.0.5
 * ```
 *
 * The gateway forwards packets between its interfaces and the router routes the Internet prefix back through it,
 * so the public client can *try* a private address: what stops it is the access rules, not missing routes.
 */
export const layout = {
  internet: '192.168.77.0/24',
  clientAddress: '192.168.77.2',
  publicAddress: '192.168.77.1',
  addressSpace: '10.77.0.0/16',
  resourceSubnet: '10.77.0.0/24',
  gatewaySubnet: '10.77.1.0/24',
  privateAddress: '10.77.1.4',
  routerGatewaySide: '10.77.1.1',
  routerResourceSide: '10.77.0.1',
  backendAddress: '10.77.0.4',
  insiderAddress: '10.77.0.5',
} as const;

export type Host = 'client' | 'gateway' | 'router' | 'backend' | 'insider';

export interface Network {
  /** The namespace name of a host. */
  namespace(host: Host): string;
  /** Runs a command inside a host's namespace and returns its output (rejects on a non-zero exit). */
  exec(host: Host, command: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }>;
  /** Starts a long-running process inside a host's namespace; `remove()` stops it. */
  spawn(host: Host, command: string, args: readonly string[]): ChildProcess;
  /**
   * An HTTP(S) request with curl from a host: the status code, or the curl exit code when no HTTP answer came
   * (7 refused, 28 timed out, 52 empty reply, 56 reset).
   */
  curl(
    host: Host,
    url: string,
    extra?: readonly string[],
  ): Promise<{ status: number; body: string; curlExit: number }>;
  remove(): Promise<void>;
}

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

/** Builds the network; the prefix keeps parallel test files (and leftovers of a killed run) apart. */
export async function buildNetwork(prefix = `pc${process.pid % 100000}`): Promise<Network> {
  const ns = (host: Host) => `${prefix}-${host}`;
  const hosts: Host[] = ['client', 'gateway', 'router', 'backend', 'insider'];
  const children: ChildProcess[] = [];
  const inNs = (host: Host, ...args: string[]) => ip('netns', 'exec', ns(host), 'ip', ...args);
  // Interface names are at most 15 characters; the prefix is short and each veth end names its side.
  const veth = (name: string) => `${prefix}${name}`.slice(0, 15);

  async function remove(): Promise<void> {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
    }
    for (const host of hosts) await ip('netns', 'del', ns(host)).catch(() => {});
  }

  /** A veth pair between two namespaces, each end addressed and up. */
  async function link(
    a: Host,
    aName: string,
    aAddress: string | undefined,
    b: Host,
    bName: string,
    bAddress: string | undefined,
  ) {
    await ip(
      'link',
      'add',
      veth(aName),
      'netns',
      ns(a),
      'type',
      'veth',
      'peer',
      'name',
      veth(bName),
      'netns',
      ns(b),
    );
    for (const [host, name, address] of [
      [a, aName, aAddress],
      [b, bName, bAddress],
    ] as const) {
      if (address) await inNs(host, 'addr', 'add', address, 'dev', veth(name));
      await inNs(host, 'link', 'set', veth(name), 'up');
    }
  }

  try {
    // Leftovers of an interrupted run with the same prefix go first.
    for (const host of hosts) await ip('netns', 'del', ns(host)).catch(() => {});
    for (const host of hosts) {
      await ip('netns', 'add', ns(host));
      await inNs(host, 'link', 'set', 'lo', 'up');
    }
    await link('client', 'c', `${layout.clientAddress}/24`, 'gateway', 'gp', `${layout.publicAddress}/24`);
    await link(
      'gateway',
      'gv',
      `${layout.privateAddress}/24`,
      'router',
      'rg',
      `${layout.routerGatewaySide}/24`,
    );
    await inNs('router', 'link', 'add', veth('br'), 'type', 'bridge');
    await inNs('router', 'addr', 'add', `${layout.routerResourceSide}/24`, 'dev', veth('br'));
    await inNs('router', 'link', 'set', veth('br'), 'up');
    await link('backend', 'b', `${layout.backendAddress}/24`, 'router', 'rb', undefined);
    await link('insider', 'i', `${layout.insiderAddress}/24`, 'router', 'ri', undefined);
    await inNs('router', 'link', 'set', veth('rb'), 'master', veth('br'));
    await inNs('router', 'link', 'set', veth('ri'), 'master', veth('br'));

    await inNs('client', 'route', 'add', layout.addressSpace, 'via', layout.publicAddress);
    await inNs('gateway', 'route', 'add', layout.addressSpace, 'via', layout.routerGatewaySide);
    await inNs('router', 'route', 'add', layout.internet, 'via', layout.privateAddress);
    await inNs('backend', 'route', 'add', 'default', 'via', layout.routerResourceSide);
    await inNs('insider', 'route', 'add', 'default', 'via', layout.routerResourceSide);
    for (const host of ['gateway', 'router'] as const) {
      await run('ip', ['netns', 'exec', ns(host), 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
    }
  } catch (error) {
    await remove();
    throw error;
  }

  return {
    namespace: ns,
    exec: (host, command, args) => run('ip', ['netns', 'exec', ns(host), command, ...args]),
    spawn(host, command, args) {
      const child = spawn('ip', ['netns', 'exec', ns(host), command, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      return child;
    },
    async curl(host, url, extra = []) {
      try {
        const { stdout } = await run('ip', [
          'netns',
          'exec',
          ns(host),
          'curl',
          '-s',
          '--max-time',
          '3',
          '-w',
          '\n%{http_code}',
          ...extra,
          url,
        ]);
        const cut = stdout.lastIndexOf('\n');
        return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut), curlExit: 0 };
      } catch (error) {
        return { status: 0, body: '', curlExit: Number((error as { code?: number }).code ?? -1) };
      }
    },
    remove,
  };
}
