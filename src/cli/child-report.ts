/**
 * What a child of `portcullis up` tells it over the Node IPC channel `up` opens (`process.send`). A child binds
 * port 0 itself and reports the port it got, so no port is chosen by one process and bound by another (another
 * child could take it in between).
 */
export interface ListeningReport {
  readonly kind: 'listening';
  readonly port: number;
}

/**
 * What a child of `up` (an engine, the service) tells it after each reload it attempted on SIGHUP: `up` waits for
 * this before it goes on with the next step of a reload (see GatewayReload). The child still prints its own line
 * for the humans reading the log; this is the answer `up` acts on.
 */
export type ReloadReport =
  | {
      readonly kind: 'reload';
      readonly ok: true;
      /** The engine's configuration generation now serving (the service has none). */
      readonly generation?: number;
    }
  | {
      readonly kind: 'reload';
      readonly ok: false;
      /** Why the configuration was refused; the child keeps serving the previous one. */
      readonly errors: string;
    };

/** What a reload attempt came to, as the engine's ConfigReloader and the service report it. */
export type ReloadAttempt =
  | { readonly ok: true; readonly generation?: number }
  | { readonly ok: false; readonly errors: string };

/** What `up` tells the service once Envoy has bound the gateway listener: where tool calls go. */
export interface GatewayUrlMessage {
  readonly kind: 'gateway-url';
  readonly url: string;
}

/** Tells `up` (when this process runs under it with an IPC channel) which port it listens on. */
export function reportListening(port: number): void {
  process.send?.({ kind: 'listening', port } satisfies ListeningReport);
}

/** Tells `up` (when this process runs under it with an IPC channel) that a reload it asked for took or was refused. */
export function reportReload(attempt: ReloadAttempt): void {
  const report: ReloadReport = attempt.ok
    ? {
        kind: 'reload',
        ok: true,
        ...(attempt.generation === undefined ? {} : { generation: attempt.generation }),
      }
    : { kind: 'reload', ok: false, errors: attempt.errors };
  process.send?.(report);
}

export function isReloadReport(message: unknown): message is ReloadReport {
  const candidate = message as {
    kind?: unknown;
    ok?: unknown;
    generation?: unknown;
    errors?: unknown;
  } | null;
  if (typeof candidate !== 'object' || candidate === null || candidate.kind !== 'reload') return false;
  if (candidate.ok === true)
    return candidate.generation === undefined || Number.isInteger(candidate.generation);
  return candidate.ok === false && typeof candidate.errors === 'string';
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

/**
 * What an engine started as `up`'s warm spare (`engine --standby`) tells it once it has loaded the running snapshot
 * and built the engine: it can take a dead engine's place now, without listening yet.
 */
export interface StandbyReport {
  readonly kind: 'standby';
}

/**
 * What `up` tells its warm spare when an engine died: listen on that engine's port (and serve its metrics port),
 * from now on as that engine. The spare answers with a ListeningReport, or a TakeOverRefusal when it cannot.
 */
export interface TakeOverMessage {
  readonly kind: 'take-over';
  readonly port: number;
  readonly metricsPort?: number;
}

/** The warm spare could not take the dead engine's place (its port is taken); it exits after saying so. */
export interface TakeOverRefusal {
  readonly kind: 'take-over-refused';
  readonly reason: string;
}

/** Tells `up` this warm spare is ready to take an engine's place. */
export function reportStandby(): void {
  process.send?.({ kind: 'standby' } satisfies StandbyReport);
}

/** Tells `up` this warm spare could not take the engine's place, and why. */
export function reportTakeOverRefused(reason: string): void {
  process.send?.({ kind: 'take-over-refused', reason } satisfies TakeOverRefusal);
}

export function isStandbyReport(message: unknown): message is StandbyReport {
  return typeof message === 'object' && message !== null && (message as StandbyReport).kind === 'standby';
}

export function isTakeOverRefusal(message: unknown): message is TakeOverRefusal {
  const candidate = message as Partial<TakeOverRefusal> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate.kind === 'take-over-refused' &&
    typeof candidate.reason === 'string'
  );
}

export function isTakeOverMessage(message: unknown): message is TakeOverMessage {
  const candidate = message as Partial<TakeOverMessage> | null;
  // The engine's port is one an engine bound (never 0); a metrics port may be left to the system.
  const isPort = (port: unknown, least: number) =>
    Number.isInteger(port) && (port as number) >= least && (port as number) <= 65535;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate.kind === 'take-over' &&
    isPort(candidate.port, 1) &&
    (candidate.metricsPort === undefined || isPort(candidate.metricsPort, 0))
  );
}

/**
 * Resolves with the take-over `up` sends its warm spare, or undefined once `stop` resolves (the spare is stopped:
 * it stops listening to the channel, which would keep it alive); rejects when the channel closes first (up is gone).
 */
export function takeOverFromParent(stop: Promise<unknown>): Promise<TakeOverMessage | undefined> {
  return new Promise((resolve, reject) => {
    if (!process.connected) return reject(new Error('no IPC channel to up: --standby runs only under up'));
    const done = () => {
      process.off('message', listener);
      process.off('disconnect', gone);
    };
    void stop.then(() => {
      done();
      resolve(undefined);
    });
    const listener = (message: unknown) => {
      if (!isTakeOverMessage(message)) return;
      done();
      resolve(message);
    };
    const gone = () => {
      done();
      reject(new Error('up went away before it needed this warm spare'));
    };
    process.on('message', listener);
    process.on('disconnect', gone);
  });
}
