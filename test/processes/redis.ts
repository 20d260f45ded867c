import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/config/plan.js';
import { until } from './wait.js';

export interface RunningRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops the server (the port stays reserved for `start`). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty (no persistence). */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: a Redis that accepts connections but never answers. */
  pause(): void;
  resume(): void;
  /** Stops the server for good and removes its directory. */
  close(): Promise<void>;
  /** Runs redis-cli against this server and returns its output (XRANGE checks and the like). */
  cli(...args: string[]): string;
}

const INSTALL_HINT =
  'redis-server is not installed; install it with `apt-get install -y redis-server` (.ci/run does this on CI)';

function findBinary(name: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const binary = found.stdout.trim();
  if (found.status !== 0 || binary === '') throw new Error(INSTALL_HINT);
  return binary;
}

async function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** A redis-server started by `launch`, with what it printed so far (for failure messages). */
interface Launched {
  readonly child: ChildProcess;
  output(): string;
}

/** Where a redis-server runs: the address it binds and the command prefix that starts it there. */
export interface Place {
  readonly host: string;
  /** E.g. `ip netns exec <namespace>` for a server on another (namespaced) host; empty here. */
  readonly commandPrefix: readonly string[];
}

const HERE: Place = { host: '127.0.0.1', commandPrefix: [] };

/** Starts redis-server on `place`'s host and `port` without persistence, in `directory`; resolves once it listens. */
async function launch(
  server: string,
  port: number,
  directory: string,
  extra: readonly string[] = [],
  place: Place = HERE,
): Promise<Launched> {
  let output = '';
  const [command, ...prefixArgs] = [...place.commandPrefix, server];
  const child = spawn(
    command!,
    [
      ...prefixArgs,
      '--port',
      String(port),
      '--bind',
      place.host,
      '--dir',
      directory,
      '--save',
      '',
      '--appendonly',
      'no',
      // Without a password, protected mode refuses every client but loopback ones: a server on another host's
      // address is reached from other hosts.
      '--protected-mode',
      place.host === HERE.host ? 'yes' : 'no',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  try {
    await until(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`redis-server exited with ${child.exitCode}:\n${output}`);
        return listening(place.host, port);
      },
      'redis-server to listen',
      { timeoutMs: 10_000, everyMs: 20, detail: () => output },
    );
  } catch (error) {
    await kill(child);
    throw error;
  }
  return { child, output: () => output };
}

/** Kills a redis-server (also a paused one) and waits until it is gone. */
async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGCONT');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

/**
 * A real redis-server on a free loopback port in a temporary directory, without persistence. A missing
 * redis-server fails the test with the install hint (never a skip).
 */
export async function startRedis(): Promise<RunningRedis> {
  const server = findBinary('redis-server');
  const client = findBinary('redis-cli');
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = async () => {
    child = (await launch(server, port, directory)).child;
  };

  const stop = async () => {
    const running = child;
    child = undefined;
    if (running !== undefined) await kill(running);
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    async close() {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    cli(...args) {
      const result = spawnSync(client, ['-p', String(port), ...args], { encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`redis-cli ${args.join(' ')} failed: ${result.stderr}`);
      return result.stdout;
    },
  };
}

export interface RunningRedisCluster {
  /** The nodes' `redis://<host>:<port>` URLs, each a primary with a third of the slots. */
  readonly urls: readonly string[];
  readonly ports: readonly number[];
  /** Runs redis-cli in cluster mode (-c follows MOVED) against the first node and returns its output. */
  cli(...args: string[]): string;
  /** Which node (index into `ports`) serves `key`'s slot. */
  nodeOf(key: string): number;
  /** Kills one node; its slots go unserved (the others keep serving theirs: full coverage is not required). */
  stopNode(index: number): Promise<void>;
  /** Starts a stopped node again on its port and directory (its nodes.conf): it rejoins with its slots, empty. */
  startNode(index: number): Promise<void>;
  /** Stops every node and removes their directories. */
  close(): Promise<void>;
}

/**
 * A real Redis Cluster of `size` primaries (no replicas) on free ports, each node with its own directory and
 * cluster bus port, slots assigned by `redis-cli --cluster create`; resolves once every node reports
 * `cluster_state:ok`. Whatever fails on the way, every node started is stopped again.
 *
 * By default the nodes listen on loopback. With `place`, they run on another host (a network namespace, started
 * through its command prefix) and listen on its address, which they also announce to each other and in their
 * MOVED redirections (`cluster-announce-ip`), so clients on other hosts follow them; `redis-cli` reaches them
 * from here at that address.
 */
export async function startRedisCluster(
  options: { size?: number; password?: string; place?: Place } = {},
): Promise<RunningRedisCluster> {
  const size = options.size ?? 3;
  const place = options.place ?? HERE;
  const announce = place.host === HERE.host ? [] : ['--cluster-announce-ip', place.host];
  // With a password, every node requires it (also from its peers) and the URLs carry it.
  const auth = options.password === undefined ? [] : ['-a', options.password, '--no-auth-warning'];
  const serverAuth =
    options.password === undefined
      ? []
      : ['--requirepass', options.password, '--masterauth', options.password];
  const server = findBinary('redis-server');
  const client = findBinary('redis-cli');
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-redis-cluster-'));
  const nodes: (Launched | undefined)[] = [];
  const ports: number[] = [];
  const busPorts: number[] = [];
  const close = async () => {
    await Promise.all(nodes.map((node) => node && kill(node.child)));
    await rm(directory, { recursive: true, force: true });
  };
  const cli = (port: number, args: readonly string[]) => {
    const result = spawnSync(client, ['-h', place.host, '-p', String(port), ...auth, ...args], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (result.status !== 0)
      throw new Error(`redis-cli -p ${port} ${args.join(' ')} failed: ${result.stderr}${result.stdout}`);
    return result.stdout;
  };
  const startNode = async (index: number) => {
    nodes[index] = await launch(
      server,
      ports[index]!,
      path.join(directory, `node-${index}`),
      [
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(busPorts[index]),
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '2000',
        '--cluster-require-full-coverage',
        'no',
        ...announce,
        ...serverAuth,
      ],
      place,
    );
  };
  const agreed = (what: string) =>
    until(
      () =>
        ports.every(
          (port, index) =>
            nodes[index] === undefined || cli(port, ['CLUSTER', 'INFO']).includes('cluster_state:ok'),
        ),
      what,
      {
        timeoutMs: 20_000,
        everyMs: 100,
        detail: () => nodes.map((node) => node?.output() ?? '').join('\n'),
      },
    );
  try {
    for (let i = 0; i < size; i++) {
      ports.push(await freePort());
      // The bus port is chosen too: the default (port + 10000) may be taken or beyond 65535.
      busPorts.push(await freePort());
      await mkdir(path.join(directory, `node-${i}`));
      await startNode(i);
    }
    cli(ports[0]!, [
      '--cluster',
      'create',
      ...ports.map((port) => `${place.host}:${port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    await agreed('the Redis Cluster to agree on its slots');
  } catch (error) {
    await close();
    throw error;
  }
  return {
    ports,
    urls: ports.map((port) =>
      options.password === undefined
        ? `redis://${place.host}:${port}`
        : `redis://:${encodeURIComponent(options.password)}@${place.host}:${port}`,
    ),
    cli: (...args) => cli(ports[0]!, ['-c', ...args]),
    nodeOf(key) {
      const running = ports.find((_, index) => nodes[index] !== undefined)!;
      const slot = Number(cli(running, ['CLUSTER', 'KEYSLOT', key]).trim());
      const owner = ports.findIndex(
        (port, index) =>
          nodes[index] !== undefined &&
          servesSlot(cli(port, ['CLUSTER', 'MYID']).trim(), cli(port, ['CLUSTER', 'NODES']), slot),
      );
      if (owner < 0) throw new Error(`no running node serves slot ${slot} of ${key}`);
      return owner;
    },
    async stopNode(index) {
      const node = nodes[index];
      nodes[index] = undefined;
      if (node) await kill(node.child);
    },
    async startNode(index) {
      await startNode(index);
      await agreed('the restarted node to rejoin the Redis Cluster');
    },
    close,
  };
}

/** Whether the node `id` serves `slot`, by the `CLUSTER NODES` table (`<id> … <from>-<to> <slot> …`). */
function servesSlot(id: string, table: string, slot: number): boolean {
  const line = table.split('\n').find((row) => row.startsWith(`${id} `));
  if (line === undefined) return false;
  return line
    .split(' ')
    .slice(8)
    .some((range) => {
      const [from, to = from] = range.split('-').map(Number);
      return from !== undefined && to !== undefined && slot >= from && slot <= to;
    });
}

/** The client connections `redis` holds open, not counting the redis-cli that asks. */
export function clientConnections(redis: RunningRedis): number {
  return redis
    .cli('CLIENT', 'LIST', 'TYPE', 'normal')
    .split('\n')
    .filter((line) => line.startsWith('id=') && !line.includes(' cmd=client|list')).length;
}
