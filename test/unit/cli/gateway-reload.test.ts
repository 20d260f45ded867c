import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import type { ReloadReport } from '../../../src/cli/child-report.js';
import { prepareRunningState } from '../../../src/cli/commands/up.js';
import { EnvoyRejected } from '../../../src/cli/envoy-resources.js';
import {
  GatewayReload,
  type ReloadableChildren,
  type RestartableEnvoys,
  SERVICE,
} from '../../../src/cli/gateway-reload.js';
import type { EnvoyAddresses } from '../../../src/cli/hot-restart.js';
import { loadConfigText } from '../../../src/config/load.js';
import { readConfigFiles } from '../../../src/config/snapshot.js';
import type { ResourceFile } from '../../../src/envoy/bootstrap/dynamic-resources.js';
import type { ChangeOutcome } from '../../../src/management/store.js';
import { recordingLogger } from '../../doubles/logger.js';
import { until } from '../../processes/wait.js';

/**
 * GatewayReload's decisions — what it refuses, which processes a change touches and in which order, how it waits for
 * the children, how reloads and management changes queue — with the real loader, compiler, planner and snapshot,
 * and fakes for the processes: a supervisor whose children answer SIGHUP as told, and an Envoy family that records
 * what it is asked to run. Every step lands in one log, so a test reads as the sequence `up` goes through.
 */

const ADMIN = { host: '127.0.0.1', port: 19901 } as const;

/** A policy that marks every answer with `x-policy: <mark>`; the mark is how a test tells versions apart. */
const marking = (mark: string) =>
  `<policies>\n  <inbound><base /></inbound>\n  <backend><base /></backend>\n  <outbound>\n    <base />\n    <set-header name="x-policy" exists-action="override"><value>${mark}</value></set-header>\n  </outbound>\n  <on-error><base /></on-error>\n</policies>\n`;

const broken = '<policies>\n  <inbound>\n    <set-header name="x">\n  </inbound>\n</policies>\n';

function configText(
  apis: readonly string[],
  gateway: Record<string, unknown> = {},
  admin: { host: string; port: number } = ADMIN,
): string {
  return stringify(configTextObject(apis, gateway, admin));
}

function configTextObject(
  apis: readonly string[],
  gateway: Record<string, unknown> = {},
  admin: { host: string; port: number } = ADMIN,
): Record<string, unknown> {
  return {
    gateway: { http: { host: '127.0.0.1', port: 18080 }, ...gateway },
    admin,
    apis: apis.map((id) => ({
      id,
      urlSuffix: id,
      serviceUrl: 'http://127.0.0.1:18081',
      policy: `${id}.xml`,
      operations: [{ id: 'get-course', method: 'GET', urlTemplate: '/api/Course/{id}' }],
    })),
  };
}

/** The mark of the policy in `file` as a child loading `snapshot` would find it (the snapshot holds files in base64). */
function markIn(snapshot: string, file: string): string | undefined {
  const encoded = (JSON.parse(snapshot) as { files: Record<string, string> }).files[file];
  return encoded && /<value>([^<]*)<\/value>/.exec(Buffer.from(encoded, 'base64').toString('utf8'))?.[1];
}

/** How a fake child answers SIGHUP. */
type Answer = 'reloads' | 'refuses' | 'silent' | 'not running';

/** The supervisor as a reload sees it: children that answer SIGHUP over "IPC" as each test says. */
class FakeChildren implements ReloadableChildren {
  readonly answers = new Map<string, Answer>();
  /** Children whose answer waits until released (see `hold`). */
  private readonly held = new Map<string, Promise<void>>();
  private readonly listeners: ((name: string, report: ReloadReport) => void)[] = [];
  /** The snapshot each signalled child would have loaded: what the running snapshot file held then. */
  readonly loaded: { name: string; snapshot: string }[] = [];
  /** When each SIGHUP was sent (ms since the epoch), by child, in order. */
  readonly signalledAt: { name: string; at: number }[] = [];
  /** Called on each SIGHUP after it is logged (a test may make a child do something else then). */
  onSignal: (name: string) => void = () => {};

  constructor(
    private readonly log: string[],
    private readonly snapshotFile: string,
  ) {}

  /** From now on the child's answers wait until the returned function is called. */
  hold(name: string): () => void {
    let release = () => {};
    this.held.set(name, new Promise<void>((resolve) => (release = resolve)));
    return () => {
      this.held.delete(name);
      release();
    };
  }

  signal(name: string, signal: NodeJS.Signals): boolean {
    const answer = this.answers.get(name) ?? 'reloads';
    if (answer === 'not running') return false;
    this.log.push(`${signal} ${name}`);
    this.signalledAt.push({ name, at: Date.now() });
    this.loaded.push({ name, snapshot: readFileSync(this.snapshotFile, 'utf8') });
    this.onSignal(name);
    if (answer === 'silent') return true;
    void (async () => {
      await (this.held.get(name) ?? Promise.resolve());
      // Over IPC, a report arrives in a later turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      this.report(
        name,
        answer === 'reloads'
          ? { kind: 'reload', ok: true }
          : { kind: 'reload', ok: false, errors: 'policies/x.xml:1:1: refused' },
      );
    })();
    return true;
  }

  /** A report from `name`, as the supervisor passes one on. */
  report(name: string, report: ReloadReport): void {
    this.log.push(`${name} ${report.ok ? 'reloaded' : 'refused'}`);
    for (const listener of [...this.listeners]) listener(name, report);
  }

  onReloadReport(listener: (name: string, report: ReloadReport) => void): () => void {
    this.listeners.push(listener);
    return () => this.listeners.splice(this.listeners.indexOf(listener), 1);
  }
}

/** An admin address other than ADMIN: changing it takes a new Envoy process. */
const OTHER_ADMIN = { host: '127.0.0.1', port: 19902 } as const;

/** The API routes and clusters in a set of resource files, as the fake Envoy reports what it takes. */
function resourcesSummary(files: readonly ResourceFile[]): string {
  const routes = files
    .filter((file) => file.kind === 'routes')
    .flatMap((file) => [...JSON.stringify(file.document).matchAll(/"name":"(api_[a-z]+)","match"/g)])
    .map((match) => match[1]);
  const clusters = files
    .filter((file) => file.kind === 'clusters')
    .flatMap((file) => file.document.resources.map((cluster) => String(cluster.name)))
    .filter((name) => name.startsWith('api_'));
  return `routes [${[...new Set(routes)].join(', ')}], clusters [${clusters.join(', ')}]`;
}

/**
 * Envoy's hot-restart family as a reload sees it: it logs which bootstrap it is asked to validate and run, and
 * which API routes and clusters the serving Envoy is given through its resource files.
 */
class FakeEnvoys implements RestartableEnvoys {
  /** Envoy's complaint about every bootstrap, when it is to refuse them. */
  complaint: string | undefined;
  /** Whether starting an Envoy on the new configuration's bootstrap (not the transition's) fails. */
  failsOnNext = false;
  /** Envoy's reason for rejecting the next resource files that add the `prices` API's routes. */
  rejectsPrices: string | undefined;
  private validated: string | undefined;
  private epoch = 0;

  constructor(private readonly log: string[]) {}

  async validate(bootstrapFile: string): Promise<string | undefined> {
    this.validated = bootstrapFile;
    this.log.push('envoy validates the new bootstrap');
    return this.complaint;
  }

  async publish(files: readonly ResourceFile[]): Promise<EnvoyAddresses> {
    const summary = resourcesSummary(files);
    if (this.rejectsPrices && summary.includes('routes [api_courses, api_prices]')) {
      this.log.push(`envoy rejects ${summary}`);
      throw new EnvoyRejected(this.rejectsPrices);
    }
    this.log.push(`envoy takes ${summary}`);
    return { admin: ADMIN, listeners: new Map() };
  }

  async start(bootstrapFile: string): Promise<EnvoyAddresses> {
    // A reload validates the new configuration's bootstrap first, in the directory an Envoy on it starts from:
    // any other is the transition's.
    const which =
      path.dirname(bootstrapFile) === path.dirname(this.validated ?? '')
        ? 'the new bootstrap'
        : 'the transition bootstrap';
    if (which === 'the new bootstrap' && this.failsOnNext) {
      this.log.push(`envoy fails to start on ${which}`);
      throw new Error('envoy exited before it was ready (exit code 1)');
    }
    this.epoch += 1;
    this.log.push(`envoy epoch ${this.epoch} on ${which}`);
    return { admin: ADMIN, listeners: new Map() };
  }

  async previousGone(): Promise<unknown> {
    // The previous epoch drains and exits some time later.
    await new Promise((resolve) => setImmediate(resolve));
    this.log.push('previous envoy gone');
    return undefined;
  }

  currentEpoch(): number {
    return this.epoch;
  }
}

interface Gateway {
  readonly reload: GatewayReload;
  readonly children: FakeChildren;
  readonly envoys: FakeEnvoys;
  readonly log: string[];
  readonly directory: string;
  readonly configFile: string;
  readonly snapshotFile: string;
  /** A file of the configuration's folder. */
  file(name: string): string;
}

const cleanUps: (() => Promise<void>)[] = [];
/** What up says about each reload, checked where it matters and kept out of the test output. */
let said: ReturnType<typeof recordingLogger>;
const saidMessages = () => said.lines.map((line) => line.message);

beforeEach(() => {
  said = recordingLogger();
});

afterEach(async () => {
  for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
  vi.restoreAllMocks();
});

/**
 * A GatewayReload set up as `up` sets it up, over a temporary folder holding `files` (the configuration is
 * `gateway.yaml`), with fake children and Envoys. Nothing is watched until the test says so.
 */
async function gatewayOver(
  files: Readonly<Record<string, string>>,
  options: { engines?: readonly string[]; childReloadTimeoutMs?: number } = {},
): Promise<Gateway> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-gateway-reload-'));
  cleanUps.push(() => rm(directory, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(directory, name), text);
  const configFile = path.join(directory, 'gateway.yaml');
  const texts = await readConfigFiles(configFile);
  const loaded = await loadConfigText(texts.get(configFile)!, configFile, texts);
  const state = await prepareRunningState(loaded);
  cleanUps.push(() => rm(state.stateDirectory, { recursive: true, force: true }));
  const log: string[] = [];
  const children = new FakeChildren(log, state.snapshotFile);
  const envoys = new FakeEnvoys(log);
  const reload = new GatewayReload({
    configFile,
    stateDirectory: state.stateDirectory,
    children,
    envoys,
    engines: options.engines ?? ['engine'],
    plan: state.plan,
    texts,
    snapshotFile: state.snapshotFile,
    snapshot: state.snapshot.text,
    logger: said.logger,
    ...(options.childReloadTimeoutMs === undefined
      ? {}
      : { childReloadTimeoutMs: options.childReloadTimeoutMs }),
  });
  cleanUps.push(async () => {
    reload.close();
    // Queued behind whatever still runs (a reload the watcher started): once it settles, nothing touches the folder.
    await reload.reload();
  });
  return {
    reload,
    children,
    envoys,
    log,
    directory,
    configFile,
    snapshotFile: state.snapshotFile,
    file: (name) => path.join(directory, name),
  };
}

const oneApi = () => ({ 'gateway.yaml': configText(['courses']), 'courses.xml': marking('one') });

function expectRefused(
  outcome: ChangeOutcome,
  status: number,
): asserts outcome is ChangeOutcome & { ok: false } {
  expect(outcome.ok).toBe(false);
  expect(outcome.ok ? undefined : outcome.status).toBe(status);
}

describe('GatewayReload: what a change touches', () => {
  it('refuses a configuration that does not compile, whole: no process is touched and the snapshot stays', async () => {
    const gateway = await gatewayOver(oneApi());
    const snapshot = await readFile(gateway.snapshotFile, 'utf8');
    await writeFile(gateway.file('courses.xml'), broken);

    const outcome = await gateway.reload.reload();

    expectRefused(outcome, 400);
    expect(outcome.problems.join('\n')).toContain('courses.xml:');
    expect(gateway.log).toEqual([]);
    expect(await readFile(gateway.snapshotFile, 'utf8')).toBe(snapshot);
    expect(gateway.reload.running().generation).toBe(1);
    expect(gateway.reload.running().texts.get(gateway.file('courses.xml'))).toBe(marking('one'));
  });

  it('refuses a configuration whose bootstrap Envoy rejects: no Envoy starts, no child reloads', async () => {
    const gateway = await gatewayOver(oneApi());
    const snapshot = await readFile(gateway.snapshotFile, 'utf8');
    gateway.envoys.complaint = 'error initializing configuration: bad listener';
    await writeFile(gateway.configFile, configText(['courses'], { trustedProxyHops: 1 }));

    const outcome = await gateway.reload.reload();

    expectRefused(outcome, 400);
    expect(outcome.problems).toEqual(['error initializing configuration: bad listener']);
    expect(gateway.log).toEqual(['envoy validates the new bootstrap']);
    expect(await readFile(gateway.snapshotFile, 'utf8')).toBe(snapshot);
    expect(gateway.reload.running().generation).toBe(1);
  });

  it('applies a policy-only change by reloading the engines, then the service, without restarting Envoy', async () => {
    const gateway = await gatewayOver(oneApi());
    await writeFile(gateway.file('courses.xml'), marking('two'));

    const outcome = await gateway.reload.reload();

    expect(outcome).toEqual({ ok: true, generation: 2 });
    expect(gateway.log).toEqual([
      'SIGHUP engine',
      'engine reloaded',
      `SIGHUP ${SERVICE}`,
      'service reloaded',
    ]);
    // Each child, when told, finds the new configuration in the snapshot it loads.
    expect(
      gateway.children.loaded.map(({ snapshot }) => markIn(snapshot, gateway.file('courses.xml'))),
    ).toEqual(['two', 'two']);
    expect(gateway.reload.running().texts.get(gateway.file('courses.xml'))).toBe(marking('two'));
  });

  it('does nothing for files that did not change, unless SIGHUP forces it', async () => {
    const gateway = await gatewayOver(oneApi());

    expect(await gateway.reload.reload()).toEqual({ ok: true, generation: 1 });
    expect(gateway.log).toEqual([]);

    expect(await gateway.reload.reload(true)).toEqual({ ok: true, generation: 2 });
    expect(gateway.log).toEqual([
      'SIGHUP engine',
      'engine reloaded',
      `SIGHUP ${SERVICE}`,
      'service reloaded',
    ]);
  });

  it("notices a backend entity's changed trusted CA file: Envoy is given up's copy of the new one in place", async () => {
    const files = oneApi();
    const withCa = stringify({
      ...configTextObject(['courses']),
      backends: [{ id: 'partner', url: 'https://127.0.0.1:18443', tls: { trustedCa: 'partner-ca.pem' } }],
    });
    const gateway = await gatewayOver({ ...files, 'gateway.yaml': withCa, 'partner-ca.pem': 'ca one' });
    const trustedCa = () =>
      gateway.reload.runningPlan().backends!.find((backend) => backend.id === 'partner')!.tls!.trustedCa!;
    const before = trustedCa();
    expect(path.dirname(before)).not.toBe(gateway.directory);
    expect(await readFile(before, 'utf8')).toBe('ca one');
    await gateway.reload.watch();

    await writeFile(gateway.file('partner-ca.pem'), 'ca two');

    await until(() => gateway.reload.running().generation === 2, 'the reload the watcher starts', 5000);
    expect(gateway.log).toEqual([
      'envoy validates the new bootstrap',
      'envoy takes routes [api_courses], clusters [api_courses]',
      'SIGHUP engine',
      'engine reloaded',
      'envoy takes routes [api_courses], clusters [api_courses]',
      `SIGHUP ${SERVICE}`,
      'service reloaded',
    ]);
    expect(trustedCa()).not.toBe(before);
    expect(await readFile(trustedCa(), 'utf8')).toBe('ca two');
    expect(await readFile(before, 'utf8')).toBe('ca one');
  });

  it('publishes an added API in the running Envoy: first the routes both have with the clusters of both, then the engines, then exactly the new resources, then the service', async () => {
    const gateway = await gatewayOver(oneApi());
    const restarting = vi.fn(() => gateway.log.push('management told: restarting'));

    const outcome = await gateway.reload.change(
      new Map([
        [gateway.configFile, configText(['courses', 'prices'])],
        [gateway.file('prices.xml'), marking('prices')],
      ]),
      1,
      { restarting },
    );

    expect(outcome).toEqual({ ok: true, generation: 2 });
    expect(gateway.log).toEqual([
      'envoy validates the new bootstrap',
      'envoy takes routes [api_courses], clusters [api_courses, api_prices]',
      'SIGHUP engine',
      'engine reloaded',
      'envoy takes routes [api_courses, api_prices], clusters [api_courses, api_prices]',
      `SIGHUP ${SERVICE}`,
      'service reloaded',
    ]);
    // No new Envoy: the management API answers when the change is done, not with 202.
    expect(restarting).not.toHaveBeenCalled();
    expect(gateway.envoys.currentEpoch()).toBe(0);
    expect(
      gateway.children.loaded.map(({ snapshot }) => markIn(snapshot, gateway.file('prices.xml'))),
    ).toEqual(['prices', 'prices']);
    expect(gateway.reload.running().config.apis.map((api) => api.id)).toEqual(['courses', 'prices']);
    expect(saidMessages()).toContain('configuration reloaded (Envoy updated in place)');
  });

  it('withdraws a removed API in the running Envoy: its routes go first, its cluster once the engines no longer pick it', async () => {
    const gateway = await gatewayOver({
      ...oneApi(),
      'gateway.yaml': configText(['courses', 'prices']),
      'prices.xml': marking('p'),
    });

    const outcome = await gateway.reload.change(new Map([[gateway.configFile, configText(['courses'])]]));

    expect(outcome).toEqual({ ok: true, generation: 2 });
    expect(gateway.log).toEqual([
      'envoy validates the new bootstrap',
      'envoy takes routes [api_courses], clusters [api_courses, api_prices]',
      'SIGHUP engine',
      'engine reloaded',
      'envoy takes routes [api_courses], clusters [api_courses]',
      `SIGHUP ${SERVICE}`,
      'service reloaded',
    ]);
  });

  it('refuses a change the running Envoy rejects, with its reason: the resources, files, snapshot and engines go back', async () => {
    const gateway = await gatewayOver(oneApi());
    const snapshot = await readFile(gateway.snapshotFile, 'utf8');
    gateway.envoys.rejectsPrices = "Error adding/updating listener(s) http: cannot bind '127.0.0.1:18080'";

    const outcome = await gateway.reload.change(
      new Map([
        [gateway.configFile, configText(['courses', 'prices'])],
        [gateway.file('prices.xml'), marking('prices')],
      ]),
    );

    expectRefused(outcome, 400);
    expect(outcome.problems).toEqual([
      "Error adding/updating listener(s) http: cannot bind '127.0.0.1:18080'",
    ]);
    expect(gateway.log).toEqual([
      'envoy validates the new bootstrap',
      'envoy takes routes [api_courses], clusters [api_courses, api_prices]',
      'SIGHUP engine',
      'engine reloaded',
      'envoy rejects routes [api_courses, api_prices], clusters [api_courses, api_prices]',
      // Back onto what runs: Envoy's resources, then the engines.
      'envoy takes routes [api_courses], clusters [api_courses]',
      'SIGHUP engine',
      'engine reloaded',
    ]);
    expect(await readFile(gateway.snapshotFile, 'utf8')).toBe(snapshot);
    expect(await readFile(gateway.configFile, 'utf8')).toBe(configText(['courses']));
    await expect(readFile(gateway.file('prices.xml'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(gateway.reload.running().generation).toBe(1);
    expect(saidMessages().join('\n')).toContain('cannot bind');
  });

  it('hot-restarts through a transition Envoy when what stays in the bootstrap changes (the admin address): engines reload once the previous Envoy is gone, then the final Envoy, then the service', async () => {
    const gateway = await gatewayOver(oneApi());
    const restarting = vi.fn(() => gateway.log.push('management told: restarting'));

    const outcome = await gateway.reload.change(
      new Map([
        [gateway.configFile, configText(['courses', 'prices'], {}, OTHER_ADMIN)],
        [gateway.file('prices.xml'), marking('prices')],
      ]),
      1,
      { restarting },
    );

    expect(outcome).toEqual({ ok: true, generation: 2 });
    expect(gateway.log).toEqual([
      'envoy validates the new bootstrap',
      'management told: restarting',
      'envoy epoch 1 on the transition bootstrap',
      'previous envoy gone',
      'SIGHUP engine',
      'engine reloaded',
      'envoy epoch 2 on the new bootstrap',
      `SIGHUP ${SERVICE}`,
      'service reloaded',
    ]);
    expect(
      gateway.children.loaded.map(({ snapshot }) => markIn(snapshot, gateway.file('prices.xml'))),
    ).toEqual(['prices', 'prices']);
    expect(gateway.reload.running().config.apis.map((api) => api.id)).toEqual(['courses', 'prices']);
  });

  it('hot-restarts when a listener of the running Envoy has a port the system chose: its files say 0, the new ones the port it got', async () => {
    const anyPort = { http: { host: '127.0.0.1', port: 0 } };
    const gateway = await gatewayOver({ ...oneApi(), 'gateway.yaml': configText(['courses'], anyPort) });

    const outcome = await gateway.reload.change(
      new Map([
        [gateway.configFile, configText(['courses', 'prices'], anyPort)],
        [gateway.file('prices.xml'), marking('prices')],
      ]),
    );

    expect(outcome).toEqual({ ok: true, generation: 2 });
    expect(gateway.log.slice(0, 3)).toEqual([
      'envoy validates the new bootstrap',
      'envoy epoch 1 on the transition bootstrap',
      'previous envoy gone',
    ]);
  });

  it('hot-restarts Envoy straight onto a bootstrap that adds no route and drops no cluster, then reloads the children', async () => {
    const gateway = await gatewayOver(oneApi());

    const outcome = await gateway.reload.change(
      new Map([[gateway.configFile, configText(['courses'], {}, OTHER_ADMIN)]]),
    );

    expect(outcome).toEqual({ ok: true, generation: 2 });
    expect(gateway.log).toEqual([
      'envoy validates the new bootstrap',
      'envoy epoch 1 on the new bootstrap',
      'previous envoy gone',
      'SIGHUP engine',
      'engine reloaded',
      `SIGHUP ${SERVICE}`,
      'service reloaded',
    ]);
  });

  it('puts everything back when the new Envoy does not start: the files, the snapshot and the engines', async () => {
    const gateway = await gatewayOver(oneApi());
    const snapshot = await readFile(gateway.snapshotFile, 'utf8');
    gateway.envoys.failsOnNext = true;

    const outcome = await gateway.reload.change(
      new Map([
        [gateway.configFile, configText(['courses', 'prices'], {}, OTHER_ADMIN)],
        [gateway.file('prices.xml'), marking('prices')],
      ]),
    );

    expectRefused(outcome, 503);
    expect(gateway.log).toEqual([
      'envoy validates the new bootstrap',
      'envoy epoch 1 on the transition bootstrap',
      'previous envoy gone',
      'SIGHUP engine',
      'engine reloaded',
      'envoy fails to start on the new bootstrap',
      // Back onto the configuration that runs.
      'SIGHUP engine',
      'engine reloaded',
    ]);
    expect(
      gateway.children.loaded.map(({ snapshot }) => markIn(snapshot, gateway.file('prices.xml'))),
    ).toEqual(['prices', undefined]);
    expect(await readFile(gateway.snapshotFile, 'utf8')).toBe(snapshot);
    expect(await readFile(gateway.configFile, 'utf8')).toBe(configText(['courses']));
    await expect(readFile(gateway.file('prices.xml'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(gateway.reload.running().generation).toBe(1);
  });
});

describe('GatewayReload: how it waits for the children', () => {
  it('waits for every engine to answer before it reloads the service', async () => {
    const gateway = await gatewayOver(oneApi(), { engines: ['engine-1', 'engine-2'] });
    const release = gateway.children.hold('engine-2');
    await writeFile(gateway.file('courses.xml'), marking('two'));

    const reloading = gateway.reload.reload();
    await until(
      () => gateway.log.includes('SIGHUP engine-2') && gateway.log.includes('engine-1 reloaded'),
      'both engines told, the first one answering',
    );
    release();

    expect(await reloading).toEqual({ ok: true, generation: 2 });
    expect(gateway.log).toEqual([
      'SIGHUP engine-1',
      'SIGHUP engine-2',
      'engine-1 reloaded',
      'engine-2 reloaded',
      `SIGHUP ${SERVICE}`,
      'service reloaded',
    ]);
  });

  it('goes on at once after a child that refuses (it says why in its own log and keeps what it ran)', async () => {
    // A wait for the timeout would outlast the test.
    const gateway = await gatewayOver(oneApi(), { childReloadTimeoutMs: 60_000 });
    gateway.children.answers.set('engine', 'refuses');
    await writeFile(gateway.file('courses.xml'), marking('two'));

    expect(await gateway.reload.reload()).toEqual({ ok: true, generation: 2 });
    expect(gateway.log).toEqual(['SIGHUP engine', 'engine refused', `SIGHUP ${SERVICE}`, 'service reloaded']);
    expect(saidMessages().filter((message) => message.includes('did not report'))).toEqual([]);
  }, 10_000);

  it('does not wait for a child that is not running', async () => {
    const gateway = await gatewayOver(oneApi(), { childReloadTimeoutMs: 60_000 });
    gateway.children.answers.set(SERVICE, 'not running');
    await writeFile(gateway.file('courses.xml'), marking('two'));

    expect(await gateway.reload.reload()).toEqual({ ok: true, generation: 2 });
    expect(gateway.log).toEqual(['SIGHUP engine', 'engine reloaded']);
    expect(saidMessages().filter((message) => message.includes('did not report'))).toEqual([]);
  }, 10_000);

  it('waits for a child that does not answer until the timeout, says so, and goes on; a report from another child does not count', async () => {
    const timeoutMs = 300;
    const gateway = await gatewayOver(oneApi(), { childReloadTimeoutMs: timeoutMs });
    gateway.children.answers.set('engine', 'silent');
    // While the engine is waited for, the service reports (a reload of its own): not the engine's answer.
    gateway.children.onSignal = (name) => {
      if (name === 'engine') gateway.children.report(SERVICE, { kind: 'reload', ok: true });
    };
    await writeFile(gateway.file('courses.xml'), marking('two'));

    expect(await gateway.reload.reload()).toEqual({ ok: true, generation: 2 });

    expect(gateway.log).toEqual([
      'SIGHUP engine',
      'service reloaded',
      `SIGHUP ${SERVICE}`,
      'service reloaded',
    ]);
    expect(saidMessages()).toContain('engine did not report a reload in time');
    const [engine, service] = gateway.children.signalledAt;
    // Timers may fire a millisecond early.
    expect(service!.at - engine!.at).toBeGreaterThanOrEqual(timeoutMs - 5);
    // Well below the default timeout (15 s): a wait that ignores the one given fails here.
  }, 10_000);
});

describe('GatewayReload: reloads and changes in turn', () => {
  it('applies changes queued while one runs one after the other, in order; one made from an older generation is refused', async () => {
    const gateway = await gatewayOver(oneApi());
    const release = gateway.children.hold('engine');
    const policy = (mark: string) => new Map([[gateway.file('courses.xml'), marking(mark)]]);

    const first = gateway.reload.change(policy('two'));
    await until(() => gateway.log.includes('SIGHUP engine'), 'the first change reaching the engine');
    const second = gateway.reload.change(policy('three'));
    const stale = gateway.reload.change(policy('stale'), 1);
    const third = gateway.reload.change(policy('four'));
    release();

    expect(await first).toEqual({ ok: true, generation: 2 });
    expect(await second).toEqual({ ok: true, generation: 3 });
    expectRefused(await stale, 409);
    expect(await third).toEqual({ ok: true, generation: 4 });
    const marks = gateway.children.loaded
      .filter(({ name }) => name === 'engine')
      .map(({ snapshot }) => markIn(snapshot, gateway.file('courses.xml')));
    expect(marks).toEqual(['two', 'three', 'four']);
    expect(await readFile(gateway.file('courses.xml'), 'utf8')).toBe(marking('four'));
  });

  it('refuses a management change while the files on disk hold an edit that does not run (409), and writes nothing', async () => {
    const gateway = await gatewayOver(oneApi());
    await writeFile(gateway.file('courses.xml'), broken);
    expectRefused(await gateway.reload.reload(), 400);

    const outcome = await gateway.reload.change(new Map([[gateway.configFile, configText(['courses'])]]));

    expectRefused(outcome, 409);
    expect(outcome.problems).toEqual([
      `${gateway.file('courses.xml')}: differs from the running configuration`,
    ]);
    expect(gateway.log).toEqual([]);
  });

  it('lets a file event during a reload join the reload queued behind it, which reads the files once it starts', async () => {
    const gateway = await gatewayOver(oneApi());
    await gateway.reload.watch();
    const reloads = vi.spyOn(gateway.reload, 'reload');
    const release = gateway.children.hold('engine');

    // An edit the watcher sees: the first reload starts and waits for the engine.
    await writeFile(gateway.file('courses.xml'), marking('two'));
    await until(() => gateway.log.includes('SIGHUP engine'), 'the first reload reaching the engine');
    // Queued behind it; then another edit, which the watcher reports while that reload still waits its turn.
    await writeFile(gateway.file('courses.xml'), marking('three'));
    const queued = gateway.reload.reload();
    const calls = reloads.mock.calls.length;
    await writeFile(gateway.file('courses.xml'), marking('four'));
    await until(() => reloads.mock.calls.length > calls, 'the watcher reporting the last edit');
    expect(reloads.mock.results.at(-1)!.value).toBe(queued);
    release();

    expect(await queued).toEqual({ ok: true, generation: 3 });
    const marks = gateway.children.loaded
      .filter(({ name }) => name === 'engine')
      .map(({ snapshot }) => markIn(snapshot, gateway.file('courses.xml')));
    expect(marks).toEqual(['two', 'four']);
  });

  it("keeps watching the running configuration's policies while its file does not parse: an edit to one is reloaded", async () => {
    const gateway = await gatewayOver(oneApi());
    await gateway.reload.watch();
    const reloads = vi.spyOn(gateway.reload, 'reload');
    // A configuration file that does not parse names no policy file.
    await writeFile(gateway.file('gateway.yaml'), `${configText(['courses'])}colour: red\n`);
    await until(() => reloads.mock.calls.length > 0, 'the watcher reporting the broken file');
    expectRefused(await reloads.mock.results.at(-1)!.value, 400);

    // The running policy is still watched: an edit made now (or right after the file is fixed, before the fix's
    // reload has watched again) is not missed.
    const calls = reloads.mock.calls.length;
    await writeFile(gateway.file('courses.xml'), marking('two'));
    await until(
      () => reloads.mock.calls.length > calls,
      'the watcher reporting the edit to a running policy',
      10_000,
    );
  });

  it('answers 503 once closed, and a change still queued then is not applied', async () => {
    const gateway = await gatewayOver(oneApi());
    const release = gateway.children.hold('engine');
    const policy = (mark: string) => new Map([[gateway.file('courses.xml'), marking(mark)]]);

    const running = gateway.reload.change(policy('two'));
    await until(() => gateway.log.includes('SIGHUP engine'), 'the change reaching the engine');
    const queued = gateway.reload.change(policy('three'));
    gateway.reload.close();
    release();

    // The change under way completes; the one behind it does not start.
    expect(await running).toEqual({ ok: true, generation: 2 });
    expectRefused(await queued, 503);
    // Even a reload that would find nothing to do.
    expectRefused(await gateway.reload.reload(), 503);
    expectRefused(await gateway.reload.reload(true), 503);
    expectRefused(await gateway.reload.change(policy('four')), 503);
    await expect(gateway.reload.startEnvoy()).rejects.toThrow('the gateway is stopping');
    expect(gateway.log.filter((line) => line.startsWith('SIGHUP'))).toEqual([
      'SIGHUP engine',
      `SIGHUP ${SERVICE}`,
    ]);
    expect(await readFile(gateway.file('courses.xml'), 'utf8')).toBe(marking('two'));
  });
});
