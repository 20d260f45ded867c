import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type EnvoyArgsOptions, envoyArgs, hotRestartSharedMemory } from '../config/envoy.js';
import type { ResourceFile } from '../envoy/bootstrap/dynamic-resources.js';
import type { Endpoint } from '../envoy/bootstrap/plan.js';
import { type EnvoyRejections, publishResources } from './envoy-resources.js';
import { pollUntil, type Supervisor } from './supervisor.js';

/** Where a running Envoy listens: read back from it, as the configuration may leave ports to the system (0). */
export interface EnvoyAddresses {
  readonly admin: Endpoint;
  /** Each listener's bound address, by listener name. */
  readonly listeners: ReadonlyMap<string, Endpoint>;
}

/** The name the Envoys of a family share in restart counts and messages. */
const FAMILY = 'envoy';

/**
 * The Envoys of one `up` run as a hot-restart family: epoch 0 chooses a free base id, each later epoch takes the
 * listen sockets over from the one before, which drains its connections and exits. At most two epochs are alive
 * at once — Envoy would cut the oldest short otherwise — so a restart first waits for the previous parent to go.
 * When the serving Envoy died (no parent to take the sockets from: a next epoch would wait for it forever), the
 * family starts afresh: whatever is left of it is stopped and a new epoch 0 binds the listeners again.
 */
export class EnvoyFamily {
  /** Counts the Envoy processes started: each has its own name (`envoy`, `envoy#1`, …). */
  private generation = -1;
  /** Envoy's restart epoch of the serving process. */
  private epoch = -1;
  private baseId: number | undefined;
  private parentGone: Promise<unknown> = Promise.resolve();
  private restart: () => Promise<unknown> = () => Promise.reject(new Error('Envoy has no restart'));
  /** The serving epoch's admin address. */
  private admin: Endpoint | undefined;

  private constructor(
    private readonly supervisor: Supervisor,
    private readonly binary: string,
    private readonly options: EnvoyArgsOptions,
    private readonly directory: string,
    private readonly rejections: EnvoyRejections,
  ) {}

  /** `rejections`: hears the family's output (up's supervisor passes each Envoy line on), for `publish`. */
  static async create(
    supervisor: Supervisor,
    binary: string,
    options: EnvoyArgsOptions,
    rejections: EnvoyRejections,
  ): Promise<EnvoyFamily> {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-envoy-family-'));
    return new EnvoyFamily(supervisor, binary, options, directory, rejections);
  }

  /**
   * Changes the serving Envoy's listeners, routes and clusters through the files it watches (envoy-resources.ts),
   * without a new process; resolves with the addresses it listens on then. Rejects with `EnvoyRejected` and
   * Envoy's reason when Envoy refuses a file.
   */
  async publish(files: readonly ResourceFile[]): Promise<EnvoyAddresses> {
    if (!this.admin) throw new Error('no Envoy serves yet');
    await publishResources(this.admin, files, this.rejections);
    return { admin: this.admin, listeners: await listenerAddresses(this.admin) };
  }

  /** What brings Envoy back when the serving one dies (the supervisor calls it, with backoff). */
  restartWith(restart: () => Promise<unknown>): void {
    this.restart = restart;
  }

  /** The restart epoch serving now (-1 before the first start). */
  currentEpoch(): number {
    return this.epoch;
  }

  private nameOf(generation: number): string {
    return generation === 0 ? FAMILY : `${FAMILY}#${generation}`;
  }

  /** Checks a bootstrap with `envoy --mode validate`; resolves to Envoy's complaint, or undefined when valid. */
  async validate(bootstrapFile: string): Promise<string | undefined> {
    const child = spawn(
      this.binary,
      ['--mode', 'validate', '-c', bootstrapFile, '-l', 'error', '--disable-hot-restart'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', resolve);
      child.once('error', () => resolve(127));
    });
    return code === 0 ? undefined : output.trim() || `envoy --mode validate exited with ${code}`;
  }

  /**
   * Starts the next Envoy on `bootstrapFile` and resolves, with the addresses it bound, once it serves (its admin
   * reports LIVE and its epoch); the previous epoch is then expected to exit on its own. Rejects, leaving the
   * previous epoch serving, when the new one fails to start.
   */
  async start(bootstrapFile: string): Promise<EnvoyAddresses> {
    const current = this.nameOf(this.generation);
    const hot = this.generation >= 0 && this.supervisor.running().includes(current);
    if (hot) await this.parentGone;
    else await this.startAfresh();
    const generation = this.generation + 1;
    const name = this.nameOf(generation);
    const epoch = hot ? this.epoch + 1 : 0;
    const baseIdFile = path.join(this.directory, `base-id-${generation}`);
    const adminFile = path.join(this.directory, `admin-${generation}`);
    // The parent exits on its own once the new epoch has taken over, possibly before this notices it is ready.
    const parentExit = hot ? this.supervisor.expectExit(current) : undefined;
    let admin: Endpoint | undefined;
    try {
      await this.supervisor.start({
        name,
        family: FAMILY,
        restart: () => this.restart(),
        command: this.binary,
        args: envoyArgs(
          bootstrapFile,
          this.options,
          { epoch, baseIdFile, ...(hot ? { baseId: this.baseId! } : {}) },
          adminFile,
        ),
        ready: (signal) =>
          pollUntil(async () => {
            admin ??= await readAdminAddress(adminFile);
            return admin !== undefined && (await serving(admin, epoch));
          }, signal),
      });
    } catch (error) {
      await this.supervisor.stop(name, 2000);
      if (parentExit) this.supervisor.cancelExpectedExit(current);
      throw error;
    }
    this.generation = generation;
    this.epoch = epoch;
    this.admin = admin;
    if (epoch === 0) this.baseId = Number((await readFile(baseIdFile, 'utf8')).trim());
    if (parentExit) this.parentGone = parentExit;
    return { admin: admin!, listeners: await listenerAddresses(admin!) };
  }

  /**
   * Before an epoch 0 that replaces a family whose serving Envoy died: stops what is left of it (a parent still
   * draining never gets the child's word to exit) and removes its shared memory.
   */
  private async startAfresh(): Promise<void> {
    for (const name of this.supervisor.running())
      if (name === FAMILY || name.startsWith(`${FAMILY}#`)) await this.supervisor.stop(name, 2000);
    if (this.baseId !== undefined) await rm(hotRestartSharedMemory(this.baseId), { force: true });
    this.baseId = undefined;
    this.parentGone = Promise.resolve();
  }

  /** Resolves once the epoch before the current one has exited (at once when there is none). */
  previousGone(): Promise<unknown> {
    return this.parentGone;
  }

  /** After every Envoy of the family stopped: removes the shared memory segment Envoy leaves behind. */
  async cleanUp(): Promise<void> {
    if (this.baseId !== undefined) await rm(hotRestartSharedMemory(this.baseId), { force: true });
    await rm(this.directory, { recursive: true, force: true });
  }
}

/** The admin address Envoy wrote to `--admin-address-path` (`127.0.0.1:9901`), once it has. */
async function readAdminAddress(file: string): Promise<Endpoint | undefined> {
  const text = (await readFile(file, 'utf8').catch(() => '')).trim();
  const colon = text.lastIndexOf(':');
  const port = Number(text.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port <= 0) return undefined;
  return { host: text.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port };
}

/** Each listener's bound address, from the admin's `/listeners`. */
async function listenerAddresses(admin: Endpoint): Promise<ReadonlyMap<string, Endpoint>> {
  const host = admin.host.includes(':') ? `[${admin.host}]` : admin.host;
  const response = await fetch(`http://${host}:${admin.port}/listeners?format=json`, {
    signal: AbortSignal.timeout(5000),
  });
  const body = (await response.json()) as {
    listener_statuses?: {
      name: string;
      local_address?: { socket_address?: { address: string; port_value: number } };
    }[];
  };
  const addresses = new Map<string, Endpoint>();
  for (const status of body.listener_statuses ?? []) {
    const socket = status.local_address?.socket_address;
    if (socket) addresses.set(status.name, { host: socket.address, port: socket.port_value });
  }
  return addresses;
}

/**
 * The admin answers as the given epoch, live. Asked on a fresh connection each time: the previous epoch closes
 * its admin listener when the next one starts, but a kept-alive connection to it would go on answering as the old
 * epoch.
 */
function serving(admin: Endpoint, epoch: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = get(
      { host: admin.host, port: admin.port, path: '/server_info', agent: false, timeout: 1000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          try {
            const info = JSON.parse(body) as {
              state?: string;
              command_line_options?: { restart_epoch?: number };
            };
            resolve(
              response.statusCode === 200 &&
                info.state === 'LIVE' &&
                (info.command_line_options?.restart_epoch ?? 0) === epoch,
            );
          } catch {
            resolve(false);
          }
        });
      },
    );
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}
