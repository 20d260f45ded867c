import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type EnvoyArgsOptions, envoyArgs, hotRestartSharedMemory } from '../config/envoy.js';
import { pollUntil, type Supervisor } from './supervisor.js';

interface AdminAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * The Envoys of one `up` run as a hot-restart family: epoch 0 chooses a free base id, each later epoch takes the
 * listen sockets over from the one before, which drains its connections and exits. At most two epochs are alive
 * at once — Envoy would cut the oldest short otherwise — so a restart first waits for the previous parent to go.
 */
export class EnvoyFamily {
  private epoch = -1;
  private baseId: number | undefined;
  private parentGone: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly supervisor: Supervisor,
    private readonly binary: string,
    private readonly options: EnvoyArgsOptions,
    private readonly directory: string,
  ) {}

  static async create(
    supervisor: Supervisor,
    binary: string,
    options: EnvoyArgsOptions,
  ): Promise<EnvoyFamily> {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-envoy-family-'));
    return new EnvoyFamily(supervisor, binary, options, directory);
  }

  /** The epoch serving now (-1 before the first start). */
  currentEpoch(): number {
    return this.epoch;
  }

  private nameOf(epoch: number): string {
    return epoch === 0 ? 'envoy' : `envoy#${epoch}`;
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
   * Starts the next epoch on `bootstrapFile` and resolves once it serves (its admin reports LIVE and the new
   * epoch); the previous epoch is then expected to exit on its own. Rejects, leaving the previous epoch serving,
   * when the new one fails to start.
   */
  async start(bootstrapFile: string, admin: AdminAddress): Promise<void> {
    await this.parentGone;
    const epoch = this.epoch + 1;
    const name = this.nameOf(epoch);
    const baseIdFile = path.join(this.directory, 'base-id');
    // The parent exits on its own once the new epoch has taken over, possibly before this notices it is ready.
    const parent = this.nameOf(this.epoch);
    const parentExit = epoch > 0 ? this.supervisor.expectExit(parent) : undefined;
    try {
      await this.supervisor.start({
        name,
        command: this.binary,
        args: envoyArgs(bootstrapFile, this.options, {
          epoch,
          baseIdFile,
          ...(this.baseId === undefined ? {} : { baseId: this.baseId }),
        }),
        ready: (signal) => pollUntil(() => serving(admin, epoch), signal),
      });
    } catch (error) {
      await this.supervisor.stop(name, 2000);
      if (parentExit) this.supervisor.cancelExpectedExit(parent);
      throw error;
    }
    if (epoch === 0) this.baseId = Number((await readFile(baseIdFile, 'utf8')).trim());
    if (parentExit) this.parentGone = parentExit;
    this.epoch = epoch;
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

/**
 * The admin answers as the given epoch, live. Asked on a fresh connection each time: the previous epoch closes
 * its admin listener when the next one starts, but a kept-alive connection to it would go on answering as the old
 * epoch.
 */
function serving(admin: AdminAddress, epoch: number): Promise<boolean> {
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
