import type { GatewayConfig } from '../config/schema.js';
import { type Logger, processLogger } from '../log.js';
import {
  isListeningReport,
  isStandbyReport,
  isTakeOverRefusal,
  type ListeningReport,
  type TakeOverMessage,
  type TakeOverRefusal,
} from './child-report.js';
import { defaultRestartPolicy, RestartHistory, type RestartPolicy } from './restart-policy.js';
import { type ChildSpec, describeExit, type Supervisor } from './supervisor.js';

/** The warm spare's name under `up` while it stands by (its lines are shown as `[spare-engine]`). */
export const SPARE = 'spare-engine';

/** A take-over only binds a port or two: longer means something is wrong, and the restart path takes over. */
const takeOverTimeoutMs = 5000;

/**
 * Whether `up` keeps a warm spare: as `engine.warmSpare` says, else with a single engine only — with several, the
 * others serve a dead one's share while it restarts, and one more process is not worth its memory.
 */
export function wantsWarmSpare(engine: GatewayConfig['engine']): boolean {
  return engine.warmSpare ?? engine.ports.length === 1;
}

/** What the spare needs of the supervisor: start it, make it the engine and ask it to take over, stop it. */
export type SpareChildren = Pick<
  Supervisor,
  'start' | 'request' | 'promote' | 'stop' | 'expectExit' | 'cancelExpectedExit'
>;

/** How the spare is started: `portcullis engine --standby` with the running snapshot and the engines' host. */
export type SpareCommand = Pick<ChildSpec, 'command' | 'args' | 'cwd' | 'env'>;

/**
 * An engine process kept ready to take a dead engine's place (issue 29): started with `--standby`, it has loaded the
 * running snapshot and built its pipelines, but listens nowhere. When an engine dies, `up` hands the spare that
 * engine's port over IPC; the spare binds it (Envoy's next connection reaches it) and from then on is that engine —
 * its name, its lines, its restarts. A new spare starts in the background. What this saves is the engine's start
 * (loading the modules, the configuration, compiling the policies): the clients of a single engine see errors for
 * the few milliseconds the kernel and Envoy take, instead of the 100 ms backoff plus the start.
 *
 * A spare that dies (or does not start) is started again with the restart policy's backoff, but is not a gateway
 * failure: when it keeps dying, `up` says so and goes on without a spare — engines that die are then restarted as
 * before. A spare that is not standing by when an engine dies (still starting, or gone) leaves that engine to the
 * usual restart.
 */
export class WarmSpare {
  #state: 'off' | 'starting' | 'standing-by' | 'taking-over' = 'off';
  /** Closed by `up` stopping, or given up on because it kept dying. */
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #history: RestartHistory;

  constructor(
    private readonly children: SpareChildren,
    private readonly command: SpareCommand,
    policy: RestartPolicy = defaultRestartPolicy,
    private readonly log: Logger = processLogger,
  ) {
    this.#history = new RestartHistory(policy);
  }

  /** Starts a spare in the background, unless one runs or starts already. */
  start(): void {
    if (this.#closed || this.#state !== 'off') return;
    this.#state = 'starting';
    const since = Date.now();
    this.children
      .start({
        ...this.command,
        name: SPARE,
        ipc: true,
        ready: async (_signal, child) => {
          await child.message(isStandbyReport);
        },
        died: (exit) => {
          this.#state = 'off';
          this.#again(`exited (${describeExit(exit)})`, since);
        },
      })
      .then(
        () => {
          if (this.#state === 'starting') this.#state = 'standing-by';
        },
        (error: unknown) => {
          this.#state = 'off';
          if (this.#closed) return;
          this.#again(`did not start (${error instanceof Error ? error.message : String(error)})`, since);
        },
      );
  }

  /** The names to send SIGHUP on a reload: the spare's, while it stands by (it hears SIGHUP only once built). */
  reloadable(): string[] {
    return this.#state === 'standing-by' ? [SPARE] : [];
  }

  /**
   * Makes the spare the engine `engine` describes, listening on `port` (and serving metrics on `metricsPort`):
   * undefined when no spare stands by now. Rejects when the spare could not (the port is taken, it died); it is gone
   * then. Either way another spare starts.
   */
  takeOver(engine: ChildSpec, port: number, metricsPort?: number): Promise<void> | undefined {
    if (this.#closed || this.#state !== 'standing-by') return undefined;
    this.#state = 'taking-over';
    const message: TakeOverMessage = {
      kind: 'take-over',
      port,
      ...(metricsPort === undefined ? {} : { metricsPort }),
    };
    return (async () => {
      // Promoted first, so that every line it writes once it has the message is the engine's. Until it answers,
      // its exit is the take-over's failure, not one more death of the engine.
      if (!this.children.promote(SPARE, engine)) throw new Error('it is gone');
      void this.children.expectExit(engine.name);
      try {
        const answer = await this.children.request(
          engine.name,
          message,
          (reply): reply is ListeningReport | TakeOverRefusal =>
            isListeningReport(reply) || isTakeOverRefusal(reply),
          takeOverTimeoutMs,
        );
        if (!isListeningReport(answer)) throw new Error(answer.reason);
        if (answer.port !== port) throw new Error(`it listens on port ${answer.port}, not ${port}`);
        this.children.cancelExpectedExit(engine.name);
      } catch (error) {
        // A spare that could not take over is not kept: it may have half done it.
        await this.children.stop(engine.name, 2000);
        throw error;
      } finally {
        this.#state = 'off';
        this.start();
      }
    })();
  }

  /** No spare is started any more (`up` stops; the supervisor stops the one that runs). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #again(how: string, since: number): void {
    if (this.#closed) return;
    const decision = this.#history.died(since);
    if ('giveUp' in decision) {
      this.#closed = true;
      this.log.error(
        `${SPARE} keeps dying (${decision.deaths} times within ${decision.windowMs / 1000} s, last: ${how}); going on without a warm spare: an engine that dies is restarted`,
      );
      return;
    }
    this.log.warn(`${SPARE} ${how}; starting another in ${decision.delayMs} ms`);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.start(), decision.delayMs);
  }
}
