import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { stopProcess } from './child.js';
import { isAlive } from './process-tree.js';

const run = promisify(execFile);

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

/** One end of a veth pair: in a namespace of the set, or (`here`) in the test process's own namespace. */
interface End<Name extends string> {
  readonly in: Name | 'here';
  /** The interface's name without the set's prefix. */
  readonly name: string;
  /** An address with its prefix length, or none (a bridge port). */
  readonly address?: string;
}

/**
 * Network namespaces `<prefix>-<name>` made for one test, with the primitives to wire them (veth pairs, bridges)
 * and to run processes in them. `remove()` stops the processes started through `spawn`, kills whatever else still
 * runs in the namespaces, and deletes them: their interfaces go with them, also the peer of a veth pair whose
 * other end is in the test process's namespace.
 */
interface Namespaces<Name extends string> {
  namespace(name: Name): string;
  /** `ip …` inside a namespace of the set. */
  ip(name: Name, ...args: string[]): Promise<void>;
  /** An interface name of the set (at most 15 characters: the prefix is short and `name` names its side). */
  interfaceName(name: string): string;
  /** A veth pair between two ends, each addressed (when it says) and up. */
  link(a: End<Name>, b: End<Name>): Promise<void>;
  /** A bridge inside a namespace, up, with these interfaces of that namespace as its ports. */
  bridge(inside: Name, name: string, ports: readonly string[]): Promise<void>;
  exec(name: Name, command: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }>;
  spawn(name: Name, command: string, args: readonly string[]): ChildProcess;
  remove(): Promise<void>;
}

/** Kills what still runs in a namespace (a killed run's orphans keep it and its interfaces alive) and deletes it. */
async function deleteNamespace(namespace: string): Promise<void> {
  const listed = await run('ip', ['netns', 'pids', namespace]).catch(() => ({ stdout: '' }));
  for (const pid of listed.stdout.split('\n').filter(Boolean).map(Number)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  await ip('netns', 'del', namespace).catch(() => {});
}

/**
 * Deletes the namespaces of earlier runs whose prefix is `family` followed by the pid of a process that is gone
 * (a run killed before its `afterAll`), so their addresses and routes do not shadow this run's.
 */
async function removeLeftoversOf(family: string): Promise<void> {
  const { stdout } = await run('ip', ['netns', 'list']);
  const pattern = new RegExp(`^(${family}(\\d+)-\\S+)`);
  for (const line of stdout.split('\n')) {
    const match = pattern.exec(line);
    if (match && !isAlive(Number(match[2]))) await deleteNamespace(match[1]!);
  }
}

/** Creates the namespaces (after deleting leftovers with the same prefix), each with its loopback up. */
async function createNamespaces<Name extends string>(
  prefix: string,
  names: readonly Name[],
): Promise<Namespaces<Name>> {
  const namespace = (name: Name) => `${prefix}-${name}`;
  const interfaceName = (name: string) => `${prefix}${name}`.slice(0, 15);
  const inside = (name: Name | 'here', ...args: string[]) =>
    name === 'here' ? ip(...args) : ip('netns', 'exec', namespace(name), 'ip', ...args);
  const children: ChildProcess[] = [];

  async function remove(): Promise<void> {
    for (const child of children) await stopProcess(child, 3000);
    for (const name of names) await deleteNamespace(namespace(name));
  }

  try {
    for (const name of names) await deleteNamespace(namespace(name));
    for (const name of names) {
      await ip('netns', 'add', namespace(name));
      await inside(name, 'link', 'set', 'lo', 'up');
    }
  } catch (error) {
    await remove();
    throw error;
  }

  return {
    namespace,
    ip: inside,
    interfaceName,
    async link(a, b) {
      const placed = (end: End<Name>) =>
        end.in === 'here' ? [interfaceName(end.name)] : [interfaceName(end.name), 'netns', namespace(end.in)];
      await ip('link', 'add', ...placed(a), 'type', 'veth', 'peer', 'name', ...placed(b));
      for (const end of [a, b]) {
        if (end.address) await inside(end.in, 'addr', 'add', end.address, 'dev', interfaceName(end.name));
        await inside(end.in, 'link', 'set', interfaceName(end.name), 'up');
      }
    },
    async bridge(where, name, ports) {
      await inside(where, 'link', 'add', interfaceName(name), 'type', 'bridge');
      await inside(where, 'link', 'set', interfaceName(name), 'up');
      for (const port of ports)
        await inside(where, 'link', 'set', interfaceName(port), 'master', interfaceName(name));
    },
    exec: (name, command, args) => run('ip', ['netns', 'exec', namespace(name), command, ...args]),
    spawn(name, command, args) {
      const child = spawn('ip', ['netns', 'exec', namespace(name), command, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      return child;
    },
    remove,
  };
}

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

/** Builds the network; the prefix keeps parallel test files (and leftovers of a killed run) apart. */
/** Builds the network; the prefix keeps parallel test files (and leftovers of a killed run) apart. */
export async function buildNetwork(prefix = `pc${process.pid % 100000}`): Promise<Network> {
  const set = await createNamespaces<Host>(prefix, ['client', 'gateway', 'router', 'backend', 'insider']);
  try {
    await set.link(
      { in: 'client', name: 'c', address: `${layout.clientAddress}/24` },
      { in: 'gateway', name: 'gp', address: `${layout.publicAddress}/24` },
    );
    await set.link(
      { in: 'gateway', name: 'gv', address: `${layout.privateAddress}/24` },
      { in: 'router', name: 'rg', address: `${layout.routerGatewaySide}/24` },
    );
    await set.link(
      { in: 'backend', name: 'b', address: `${layout.backendAddress}/24` },
      { in: 'router', name: 'rb' },
    );
    await set.link(
      { in: 'insider', name: 'i', address: `${layout.insiderAddress}/24` },
      { in: 'router', name: 'ri' },
    );
    await set.bridge('router', 'br', ['rb', 'ri']);
    await set.ip('router', 'addr', 'add', `${layout.routerResourceSide}/24`, 'dev', set.interfaceName('br'));

    await set.ip('client', 'route', 'add', layout.addressSpace, 'via', layout.publicAddress);
    await set.ip('gateway', 'route', 'add', layout.addressSpace, 'via', layout.routerGatewaySide);
    await set.ip('router', 'route', 'add', layout.internet, 'via', layout.privateAddress);
    await set.ip('backend', 'route', 'add', 'default', 'via', layout.routerResourceSide);
    await set.ip('insider', 'route', 'add', 'default', 'via', layout.routerResourceSide);
    for (const host of ['gateway', 'router'] as const)
      await set.exec(host, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  } catch (error) {
    await set.remove();
    throw error;
  }

  return {
    namespace: set.namespace,
    exec: set.exec,
    spawn: set.spawn,
    async curl(host, url, extra = []) {
      try {
        const { stdout } = await set.exec(host, 'curl', [
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
    remove: set.remove,
  };
}

/**
 * Hosts on one Ethernet segment, as machines in one data centre: each host a namespace with its own address, all
 * on a bridge that lives in a namespace of its own (`<prefix>-switch`), and the test process joined to the bridge
 * by one veth pair, so it reaches every host directly. That pair is the only trace in the test process's
 * namespace; it goes with the switch's namespace.
 *
 * ```
 *  test process 10.79.N.1 ──┐
 *                      switch (a bridge) ── hosts[0] 10.79.N.2, hosts[1] 10.79.N.3, …
 * ```
 *
 * Its veth pair puts an address and a route in the test process's namespace, so namespaces a killed run left
 * behind are deleted first (their pair would hold the same subnet), and each segment takes the first 10.79.N.0/24
 * that no interface here has (another test file, or another checkout's run, may have one up at the same time).
 */
export interface Segment<Name extends string> {
  /** The test process's address on the segment: where a host reaches a server the test runs in-process. */
  readonly testAddress: string;
  address(host: Name): string;
  namespace(host: Name): string;
  /** The command prefix that runs a command on `host` (`ip netns exec <namespace>`). */
  commandPrefix(host: Name): readonly string[];
  /** The command lines of the processes running on `host` now (`ip netns pids`). */
  processes(host: Name): Promise<string[][]>;
  /** Kills whatever still runs on the hosts and deletes every namespace (the veth pair to the test goes too). */
  remove(): Promise<void>;
}

/** The first `<first16>.N` (a /24) that no address of the test process's namespace is in. */
async function unusedSubnet(first16: string): Promise<string> {
  const { stdout } = await run('ip', ['-4', '-o', 'addr', 'show']);
  for (let third = 0; third < 256; third++) {
    const subnet = `${first16}.${third}`;
    if (!stdout.includes(` ${subnet}.`)) return subnet;
  }
  throw new Error(`every ${first16}.N.0/24 is in use here:\n${stdout}`);
}

/** Prefixes of segments: this family name and the pid of the run, whose liveness tells a leftover. */
const SEGMENT_FAMILY = 'ph';

export async function buildSegment<Name extends string>(hosts: readonly Name[]): Promise<Segment<Name>> {
  await removeLeftoversOf(SEGMENT_FAMILY);
  const subnet = await unusedSubnet('10.79');
  const set = await createNamespaces<Name | 'switch'>(`${SEGMENT_FAMILY}${process.pid}`, [
    ...hosts,
    'switch',
  ]);
  const address = (host: Name) => `${subnet}.${hosts.indexOf(host) + 2}`;
  const testAddress = `${subnet}.1`;
  try {
    await set.link({ in: 'here', name: 't', address: `${testAddress}/24` }, { in: 'switch', name: 'st' });
    for (const [index, host] of hosts.entries())
      await set.link(
        { in: host, name: `h${index}`, address: `${address(host)}/24` },
        { in: 'switch', name: `s${index}` },
      );
    await set.bridge('switch', 'br', ['st', ...hosts.map((_, index) => `s${index}`)]);
  } catch (error) {
    await set.remove();
    throw error;
  }
  return {
    testAddress,
    address,
    namespace: set.namespace,
    commandPrefix: (host) => ['ip', 'netns', 'exec', set.namespace(host)],
    async processes(host) {
      const { stdout } = await run('ip', ['netns', 'pids', set.namespace(host)]);
      return stdout
        .split('\n')
        .filter(Boolean)
        .flatMap((pid) => {
          try {
            return [readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')];
          } catch {
            return []; // Exited since it was listed.
          }
        });
    },
    remove: set.remove,
  };
}
