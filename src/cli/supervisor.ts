import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type Logger, processLogger } from '../log.js';
import { redactText } from '../redact.js';
import { isListeningReport, isReloadReport, type ReloadReport } from './child-report.js';
import { defaultRestartPolicy, RestartHistory, type RestartPolicy } from './restart-policy.js';

export interface ChildSpec {
  /** Shown before each of its log lines and in every message about it. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /**
   * A Node IPC channel to the child: it reports the port it bound and each reload (see child-report.ts) and can be
   * sent messages.
   */
  readonly ipc?: boolean;
  /** Resolves when the child is ready to serve; rejects with a reason otherwise. */
  readonly ready: (signal: AbortSignal, child: StartingChild) => Promise<void>;
  /**
   * What brings the child back when it dies while it serves (not when it fails to start): without it, its death is
   * only reported to `onUnexpectedExit`.
   */
  readonly restart?: () => Promise<unknown>;
  /** The name its deaths are counted and reported under (the Envoys of one hot-restart family share one). */
  readonly family?: string;
  /**
   * A stand-in that can take the dead child's place at once (an engine's warm spare, see warm-spare.ts), tried
   * before `restart`: undefined when none is ready now, else the take-over, which rejects when it failed — then
   * `restart` runs after the usual delay.
   */
  readonly standIn?: () => Promise<unknown> | undefined;
  /**
   * What happens when it dies while it serves, for a child that has no `restart` and is not a gateway process whose
   * repeated deaths make up give up (a warm spare): called instead of `onUnexpectedExit`.
   */
  readonly died?: (exit: ChildExit) => void;
}

/** A child being started, as its readiness probe sees it. */
export interface StartingChild {
  /** Resolves with the first port the child reports over IPC (never, for a child without IPC or that never does). */
  readonly port: Promise<number>;
  /** Resolves with the first message the child sends over IPC that `accepts` takes (a warm spare's standby report). */
  message<T>(accepts: (message: unknown) => message is T): Promise<T>;
}

export interface StartedChild {
  /** The port the child reported, when it reported one before it was ready. */
  readonly port?: number;
}

export interface ChildExit {
  readonly name: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A child that died more often than the restart policy allows. */
export interface GaveUp {
  readonly family: string;
  /** How its last life ended: `killed by SIGKILL`, `exit code 3`, or why its restart failed. */
  readonly last: string;
  readonly deaths: number;
  readonly windowMs: number;
}

/** Shows a line a child wrote, under the child's name (src/cli/log-view.ts). */
export type ChildOutput = (name: string, line: string) => void;

/**
 * Starts named child processes, prefixes their output, waits for readiness, restarts one that dies while it
 * serves (with backoff, see restart-policy.ts), and stops them all. Children get their own process group so a stop
 * reaches whatever they started too.
 */
export class Supervisor {
  private readonly children = new Map<string, ChildProcess>();
  /** What each running child is now: a warm spare that took a dead engine's place became that engine (`promote`). */
  private readonly identities = new WeakMap<ChildProcess, Identity>();
  private stopping = false;
  private readonly exitListeners: ((exit: ChildExit) => void)[] = [];
  private readonly giveUpListeners: ((gaveUp: GaveUp) => void)[] = [];
  private readonly reloadListeners: ((name: string, report: ReloadReport) => void)[] = [];
  /** Children whose exit is part of the plan (an Envoy replaced by a hot restart), with who awaits it. */
  private readonly expected = new Map<string, (exit: ChildExit) => void>();
  private readonly histories = new Map<string, RestartHistory>();
  /** Restarts waiting for their backoff delay: cancelled by a stop. */
  private readonly pendingRestarts = new Set<NodeJS.Timeout>();

  constructor(
    private readonly out: ChildOutput = (name, line) => process.stdout.write(`[${name}] ${line}\n`),
    private readonly policy: RestartPolicy = defaultRestartPolicy,
    /** Where the supervisor says what it does (a restart, a child back). */
    private readonly log: Logger = processLogger,
  ) {}

  /** Called when a child without a `restart` exits while the supervisor is not stopping. */
  onUnexpectedExit(listener: (exit: ChildExit) => void): void {
    this.exitListeners.push(listener);
  }

  /** Called when a child keeps dying: more deaths within the policy's window than it allows. */
  onGiveUp(listener: (gaveUp: GaveUp) => void): void {
    this.giveUpListeners.push(listener);
  }

  /** Restarts so far, by family (the child's name unless it names one). */
  restartCounts(): Record<string, number> {
    return Object.fromEntries([...this.histories].map(([family, history]) => [family, history.count()]));
  }

  /** Called with each reload report a child sends over IPC (see child-report.ts); returns what stops that. */
  onReloadReport(listener: (name: string, report: ReloadReport) => void): () => void {
    this.reloadListeners.push(listener);
    return () => {
      const index = this.reloadListeners.indexOf(listener);
      if (index >= 0) this.reloadListeners.splice(index, 1);
    };
  }

  /**
   * From now on the child's exit is expected (it will not be reported as unexpected); resolves when it exited.
   * Resolves at once for a child that is not running.
   */
  expectExit(name: string): Promise<ChildExit> {
    if (!this.children.has(name)) return Promise.resolve({ name, code: null, signal: null });
    return new Promise((resolve) => this.expected.set(name, resolve));
  }

  /** The child's exit is unexpected again (the plan that expected it fell through). */
  cancelExpectedExit(name: string): void {
    this.expected.delete(name);
  }

  /** Sends a signal to one child (its process only, not its group). False when it is not running. */
  signal(name: string, signal: NodeJS.Signals): boolean {
    const child = this.children.get(name);
    return child?.pid !== undefined && child.kill(signal);
  }

  /** Sends a message over a child's IPC channel. False when it is not running or has no channel. */
  send(name: string, message: unknown): boolean {
    const child = this.children.get(name);
    return child?.connected === true && child.send(message as object);
  }

  /**
   * Sends a message over a child's IPC channel and resolves with the first answer `accepts` takes; rejects when the
   * child is not running, exits first, or does not answer within `timeoutMs`.
   */
  request<T>(
    name: string,
    message: unknown,
    accepts: (message: unknown) => message is T,
    timeoutMs: number,
  ): Promise<T> {
    const child = this.children.get(name);
    if (!child?.connected) return Promise.reject(new Error(`${name} is not running`));
    return new Promise<T>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        child.off('message', listener);
        child.off('exit', gone);
      };
      const listener = (answer: unknown) => {
        if (!accepts(answer)) return;
        done();
        resolve(answer);
      };
      const gone = (code: number | null, signal: NodeJS.Signals | null) => {
        done();
        reject(new Error(`${name} exited before it answered (${describeExit({ name, code, signal })})`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${name} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      child.on('message', listener);
      child.once('exit', gone);
      child.send(message as object);
    });
  }

  /**
   * The running child `from` becomes `spec.name` from now on: its lines, reload reports and deaths are that child's
   * (a warm spare that took a dead engine's port is that engine). Its life as `spec.name` starts now. False when
   * `from` is not running.
   */
  promote(from: string, spec: ChildSpec): boolean {
    const child = this.children.get(from);
    const identity = child && this.identities.get(child);
    if (!child || !identity || child.exitCode !== null || child.signalCode !== null) return false;
    this.children.delete(from);
    this.children.set(spec.name, child);
    identity.spec = spec;
    identity.since = Date.now();
    return true;
  }

  async start(spec: ChildSpec, readyTimeoutMs = 30_000): Promise<StartedChild> {
    if (this.stopping) throw new Error(`not starting ${spec.name}: stopping everything`);
    const startedAt = Date.now();
    const child = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env ?? process.env,
      stdio: spec.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.children.set(spec.name, child);
    const identity: Identity = { spec, since: startedAt };
    this.identities.set(child, identity);
    let ready = false;
    let reportedPort: number | undefined;
    const port = new Promise<number>((resolve) => {
      child.on('message', (message) => {
        if (!isListeningReport(message) || reportedPort !== undefined) return;
        reportedPort = message.port;
        resolve(message.port);
      });
    });
    const message = <T>(accepts: (message: unknown) => message is T) =>
      new Promise<T>((resolve) => {
        const listener = (candidate: unknown) => {
          if (!accepts(candidate)) return;
          child.off('message', listener);
          resolve(candidate);
        };
        child.on('message', listener);
      });
    child.on('message', (message) => {
      if (!isReloadReport(message)) return;
      for (const listener of [...this.reloadListeners]) listener(identity.spec.name, message);
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (line) => {
        // Envoy and companions (a sample backend) log what they like: credentials are removed from what is shown.
        this.out(identity.spec.name, redactText(line));
      });
    }
    const exited = new Promise<ChildExit>((resolve) => {
      child.once('exit', (code, signal) => resolve({ name: identity.spec.name, code, signal }));
      child.once('error', (error) => {
        this.log.error(`${spec.name} cannot start ${spec.command}: ${error.message}`);
        resolve({ name: identity.spec.name, code: 127, signal: null });
      });
    });
    void exited.then((exit) => {
      // What it is when it dies: a promoted spare dies as the engine it became.
      const { spec: now, since } = identity;
      // Only the current process of that name leaves the table (a restart may already have replaced it).
      if (this.children.get(now.name) === child) this.children.delete(now.name);
      const planned = this.expected.get(now.name);
      this.expected.delete(now.name);
      if (planned) return planned(exit);
      // A child that dies before it is ready is reported by `start` rejecting: the caller decides what it means
      // (fatal at start-up, a refused reload, another try of a restart).
      if (this.stopping || !ready) return;
      // Whatever it started in its group goes with it; its replacement starts afresh.
      signalGroup(child, 'SIGKILL');
      if (now.restart)
        this.restartLater(
          now.family ?? now.name,
          now.restart,
          `exited (${describeExit(exit)})`,
          since,
          now.standIn,
        );
      else if (now.died) now.died(exit);
      else for (const listener of this.exitListeners) listener(exit);
    });

    const abort = new AbortController();
    const timeout = setTimeout(() => abort.abort(), readyTimeoutMs);
    try {
      await Promise.race([
        spec.ready(abort.signal, { port, message }),
        exited.then((exit) => {
          throw new Error(`${spec.name} exited before it was ready (${describeExit(exit)})`);
        }),
        new Promise<never>((_, reject) =>
          abort.signal.addEventListener('abort', () =>
            reject(new Error(`${spec.name} was not ready within ${readyTimeoutMs / 1000} s`)),
          ),
        ),
      ]);
      ready = true;
    } catch (error) {
      // Not ready in time (or its probe failed): it goes, so that a next try never runs beside it.
      if (this.children.get(spec.name) === child) this.children.delete(spec.name);
      signalGroup(child, 'SIGKILL');
      throw error;
    } finally {
      clearTimeout(timeout);
      abort.abort();
    }
    return reportedPort === undefined ? {} : { port: reportedPort };
  }

  /**
   * A child of `family` died (`how`: "exited (killed by SIGKILL)") after it had been up since `upSince`: its stand-in
   * takes its place at once when one is ready, else it is restarted after the policy's delay — or up gives up on it.
   * Either way it is one more death and one more restart. A restart that fails before the child is ready is one more
   * death; a stand-in that fails to take over is not (the restart after the delay follows).
   */
  private restartLater(
    family: string,
    restart: () => Promise<unknown>,
    how: string,
    upSince: number,
    standIn?: () => Promise<unknown> | undefined,
  ): void {
    const history = this.histories.get(family) ?? new RestartHistory(this.policy);
    this.histories.set(family, history);
    const decision = history.died(upSince);
    if ('giveUp' in decision) {
      for (const listener of this.giveUpListeners)
        listener({ family, last: how, deaths: decision.deaths, windowMs: decision.windowMs });
      return;
    }
    const takingOver = this.stopping ? undefined : standIn?.();
    if (takingOver) {
      this.log.warn(`${family} ${how}; its warm spare takes its place (restart ${decision.restart})`);
      takingOver.then(
        () => this.log.info(`${family} is back (restart ${decision.restart})`),
        (error: unknown) => {
          if (this.stopping) return;
          const message = error instanceof Error ? error.message : String(error);
          this.log.warn(
            `${family}'s warm spare did not take its place (${message}); restarting in ${decision.delayMs} ms (restart ${decision.restart})`,
          );
          this.restartAfter(family, restart, decision, standIn);
        },
      );
      return;
    }
    this.log.warn(`${family} ${how}; restarting in ${decision.delayMs} ms (restart ${decision.restart})`);
    this.restartAfter(family, restart, decision, standIn);
  }

  private restartAfter(
    family: string,
    restart: () => Promise<unknown>,
    decision: { readonly restart: number; readonly delayMs: number },
    standIn: (() => Promise<unknown> | undefined) | undefined,
  ): void {
    const timer = setTimeout(async () => {
      this.pendingRestarts.delete(timer);
      if (this.stopping) return;
      const attempt = Date.now();
      try {
        await restart();
        this.log.info(`${family} is back (restart ${decision.restart})`);
      } catch (error) {
        if (this.stopping) return;
        const message = error instanceof Error ? error.message : String(error);
        this.restartLater(family, restart, `did not come back (${message})`, attempt, standIn);
      }
    }, decision.delayMs);
    this.pendingRestarts.add(timer);
  }

  /** Stops one child as `stopAll` would; its exit is expected. */
  async stop(name: string, graceMs = 10_000): Promise<void> {
    const child = this.children.get(name);
    if (!child) return;
    const exited = this.expectExit(name);
    await stopChild(child, graceMs);
    await exited;
  }

  running(): string[] {
    return [...this.children.keys()];
  }

  /** SIGTERM to every child (newest first), SIGKILL to any still alive after `graceMs`. No restart after this. */
  async stopAll(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    for (const timer of this.pendingRestarts) clearTimeout(timer);
    this.pendingRestarts.clear();
    const children = [...this.children.entries()].reverse();
    await Promise.all(children.map(([, child]) => stopChild(child, graceMs)));
    this.children.clear();
  }
}

/** What a running child is now: the spec it runs under (changed by `promote`) and since when it serves as that. */
interface Identity {
  spec: ChildSpec;
  since: number;
}

export function describeExit(exit: ChildExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalGroup(child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
  // Whatever the child left in its group goes too.
  signalGroup(child, 'SIGKILL');
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Polls until `probe` resolves true, every `intervalMs`, until the signal aborts. */
export async function pollUntil(
  probe: () => Promise<boolean>,
  signal: AbortSignal,
  intervalMs = 100,
): Promise<void> {
  while (!signal.aborted) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A readiness probe: the URL answers 2xx (and, when given, a body containing `expected`). */
export function httpReady(url: string, expected?: string): (signal: AbortSignal) => Promise<void> {
  return (signal) =>
    pollUntil(async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      const body = await response.text();
      return response.ok && (expected === undefined || body.includes(expected));
    }, signal);
}
