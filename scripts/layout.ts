/**
 * The module layout of `src/`: what each module owns and which modules it may import. One list, read twice:
 * test/unit/layout.test.ts checks the imports of the source against it, and docs/architecture.md's layout table is
 * generated from it (test/unit/docs.test.ts fails when the page and this list differ). After changing a rule:
 *
 *   node --import tsx scripts/layout.ts --write
 *
 * It imports nothing of Portcullis, so it runs (and the layout test loads it) whatever state `src/` is in.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ModuleRule {
  /** What the module owns: one table cell of Markdown. */
  readonly owns: string;
  /** The modules (`expr`) or single files (`envoy/contract.ts`) of other modules it may import; `*`: anything. */
  readonly mayImport: readonly string[];
  /** Why an import is allowed, where the reason is not the obvious one (shown after the import). */
  readonly because?: Readonly<Record<string, string>>;
  /** Why the module may import what it does, when one sentence says it for the whole list. */
  readonly why?: string;
}

/** Every module under `src/` (its first folder), in the order a reader meets them: from the language up to the CLI. */
export const modules: Readonly<Record<string, ModuleRule>> = {
  expr: {
    owns: 'the policy expression language (C# subset) — lexer, parser, compiler to closures, .NET-like runtime; `library/` one file per .NET area, each declaring its own types and extension methods (a name claimed twice is refused), listed in `library/index.ts` in any order',
    mayImport: [],
  },
  policy: {
    owns: 'policy documents, scopes and `<base />`, the compiled pipeline; `elements/` one file per element, declared with `defineElement` (typed attribute and child accessors); `shared/` what several elements and the runner use; element files import neither each other nor the runner. No gRPC, Koa or Redis: a library tested, fuzzed and benchmarked alone',
    mayImport: ['expr'],
  },
  catalog: {
    owns: 'APIs, operations, URL templates and the matcher, `request-path.ts` (path normalisation), subscriptions, importers (OpenAPI, WADL, WSDL), `apiops/` (APIOps artifacts ⇄ configuration: one file per API Management resource kind in `resources/`, listed in `resources/index.ts`)',
    mayImport: ['policy'],
  },
  state: {
    owns: 'caches, counters and event streams behind one interface each: in-process (lru-cache, bounded in bytes), embedded (`embedded.ts`, LMDB in `state.dataDir`) and Redis (Lua scripts); `limit-rules.ts` the counting rules all three follow',
    mayImport: [],
  },
  envoy: {
    owns: "`contract.ts` (every name Envoy's bootstrap and the engine share: attributes, internal headers, clusters), `config-types.ts` (the part of Envoy's v3 API the bootstrap is written in), `bootstrap/` (the gateway's bootstrap, one file per Envoy object: `plan.ts` the plan types and their defaults, listeners, connection manager, HTTP filters, routes, clusters, TLS, RBAC, the management listener, tracing, `engine-bypass.ts` the routes of policy-less APIs that skip the engine, `dynamic-resources.ts` the bootstrap `up` runs: listeners, routes and clusters as files Envoy watches), `sidecar.ts` (the access sidecar), `snippet.ts` (what to paste into your own Envoy), `ext-authz.ts` (the ext_authz filter), the binary locator",
    mayImport: [],
  },
  extproc: {
    owns: 'the ext_proc protocol only: the gRPC server (`grpc-h2.ts`: gRPC over `node:http2` for Process and the health check), the stream state machine, Envoy messages ⇄ exchanges, header mutations, the pass-through exchange',
    mayImport: ['envoy/contract.ts'],
  },
  extauthz: {
    owns: 'the ext_authz protocol only: the Authorization gRPC server, `Check` ⇄ the same exchanges as ext_proc',
    mayImport: ['extproc', 'envoy/contract.ts'],
    why: "The ext_authz variant drives the same exchanges (extproc/exchange.ts) over Envoy's Authorization service.",
  },
  engine: {
    owns: "an engine process put together from a loaded configuration (`engine.ts`): the policy exchange over the catalog and pipelines (`exchange/`: its states in one union, one file per job), policy services (`services.ts`: caches, `guarded-limits.ts`, `element-counters.ts`, `value-codecs.ts`, `http-fetch.ts`), client and backend certificates, debug traces (`trace-steps.ts`: the one step format of debug traces, `run` and `test`), metrics, reload generations (`generations.ts`), `backend-routing.ts` (whether the Envoy in front follows the engine's backend choice)",
    mayImport: ['policy', 'catalog', 'state', 'identity', 'extproc', 'expr', 'envoy/contract.ts', 'config'],
    because: { expr: 'cached values', config: 'the loaded configuration' },
  },
  identity: {
    owns: "token sources for the gateway's own calls (`sources/` one file each: portcullis, client-credentials, azure-imds, federated), their cache, and the credential manager of get-authorization-context",
    mayImport: ['state'],
    why: "Token sources for the gateway's own calls; the engine hands them to the policies as a service.",
  },
  auth: {
    owns: 'the OAuth 2.1 authorization server: `routes.ts` (every path in one table on @koa/router; client endpoints behind one CORS / no-store / JSON-error middleware), `endpoints/`, `grants/` (one file per grant), `authorize/` (the authorization flow, each endpoint a list of named steps: session, pages, request checks, login, consent, issuing the code), `upstream/` (sign-in through an OpenID Connect provider, as steps of the same flow), `client-documents/` (Client ID Metadata Documents: fetched pinned to a checked public address, validated, cached), `stores/`',
    mayImport: ['state'],
  },
  mcp: {
    owns: 'the MCP endpoint: Streamable HTTP, protocol revisions, tools built from the catalog, `upstream/` the tools of remote MCP servers (APIs of type mcp): their sessions and aggregation',
    mayImport: ['auth', 'catalog'],
  },
  config: {
    owns: "loading and validating the configuration (`checks.ts` the named cross-field checks, `wording.ts` our wording of schema errors, `config-error.ts`), `policy-source.ts` (where a policy value's document is: in place or a file beside), `watch.ts` (the files a configuration reads, and watching them), `snapshot.ts` (the running configuration restarts start from), the runtime plan and the bootstrap it writes",
    mayImport: ['auth', 'catalog', 'envoy', 'identity', 'policy', 'state'],
    why: 'The modules whose options it validates.',
  },
  service: {
    owns: 'the Koa process composition (authorization server + MCP)',
    mayImport: ['config', 'auth', 'mcp', 'state', 'envoy/contract.ts'],
  },
  management: {
    owns: 'the management REST API (Koa): one file per resource in `resources/`, the configuration document it edits',
    mayImport: ['config', 'auth', 'envoy'],
  },
  testing: {
    owns: "policy tests offline (`portcullis test`, `run`): the test-file format, Envoy played in-process over the engine's own exchange (`envoy-double.ts`), stubbed services (HTTP by URL, clock, counters, cache, the gateway's own tokens and connections), JWT test keys, expectations, coverage (text, lcov), JUnit, starter tests",
    mayImport: ['engine', 'config', 'catalog', 'policy', 'expr', 'state', 'extproc', 'envoy/contract.ts'],
    why: "Policy tests run the engine's own exchange over a compiled configuration, with stubbed services.",
  },
  cli: {
    owns: "the `portcullis` command (one file per sub-command in `commands/`); `up`'s supervisor, restart policy, reload orchestration and log view (`log-view.ts`)",
    mayImport: ['*'],
  },
};

/** The rules as the layout test reads them: module → what it may import. */
export const mayImport: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  Object.entries(modules).map(([name, rule]) => [name, rule.mayImport]),
);

/**
 * The files directly in `src/`: shared by every module, they import only each other. Each says here what it is
 * for; the generated table lists them, so a new shared file without a line here makes the docs test fail.
 */
export const sharedFiles: Readonly<Record<string, string>> = {
  'log.ts': 'the one logger (pino behind the `Logger` shape modules take; request and trace ids, redaction)',
  'tracing.ts': "a process's trace identity and W3C trace-context helpers (`telemetry.otlp`)",
  'tracing-export.ts':
    "the process's OpenTelemetry tracer provider, imported only when `telemetry.otlp` is set",
  'metrics-export.ts': 'its metrics pushed over OTLP from the prom-client registries',
  'redact.ts': 'credentials out of every log line, trace and error',
  'bounded-body.ts': 'the one bounded request-body reader of the Koa processes',
  'diagnostic.ts': 'the one diagnostic type and formatter (`file:line:col: path: message`)',
  'limit-counters.ts': 'the rate-limit and quota counter contract (types)',
  'version.ts': 'the version from `package.json`',
  'package-root.ts':
    'the folder holding `package.json`, `proto/`, `bin/` and `.venv/`, wherever the running module lies',
  'inside-folder.ts': 'whether a file is inside a folder, lexically (no `..`, links not followed)',
  'yaml-data.ts': 'YAML documents whose aliases cannot expand past a bound (alias bombs refused)',
  'certificate-thumbprint.ts':
    "a certificate's thumbprint as API Management shows it (SHA-1 of the DER, upper-case hex): the engine's and the expressions'",
};

/**
 * The folders directly under `test/`, each named for what it holds (STYLE.md, "Test code"); the layout test refuses
 * any other. The test folders (`testKinds`) hold `*.test.ts` files and, per folder, at most one setup file
 * (`testSetupFile`) that only the tests beside it and below it import; code shared across test folders lives in one
 * of the others.
 */
export const testFolders: Readonly<Record<string, string>> = {
  unit: 'tests of one unit in-process, laid out like the source',
  integration:
    'tests of a module against the real things it talks to (Envoy, Redis, the engine), laid out like the source',
  e2e: 'tests of the whole gateway as `portcullis up` runs it',
  fuzz: 'property-based fuzzing (`npm run fuzz` runs it long)',
  processes:
    'the real thing a test runs against, started, watched and stopped: Envoy, the engine and gateway stacks and the files they start from, `up` and the CLI, the authorization server, Redis, Kafka, network namespaces, certificates, spawned workers; `until()` / `elapse()`',
  doubles:
    'stand-ins for what Portcullis talks to or is handed: backends, clients and browsers, a fake Envoy stream, fake policy services and context, MCP fakes, a recording logger, a management store',
  suites: 'conformance suites every implementation of a store runs',
  fixtures:
    'data files tests read, the code that vendors or scans them, scratch folders for the files a test writes',
  soak: '`npm run soak`: stalled and abandoned uploads through a real Envoy, pass or fail',
  kafka: "the Kafka broker's jars, pinned by Maven (`processes/kafka.ts` runs them)",
};

/** The folders under `test/` that hold tests; every other `.ts` file in them is its folder's `testSetupFile`. */
export const testKinds: readonly string[] = ['unit', 'integration', 'e2e', 'fuzz'];

/** The one name of a test folder's own setup. */
export const testSetupFile = 'harness.ts';

/** Folders whose code imports nothing under `test/`: the product does not depend on its tests, nor do benchmarks. */
export const independentOfTests: readonly string[] = ['src', 'bench'];

const root = fileURLToPath(new URL('..', import.meta.url));
const architecturePage = path.join(root, 'docs', 'architecture.md');
export const generatedStart =
  '<!-- The layout table is generated from scripts/layout.ts: `node --import tsx scripts/layout.ts --write`. -->';
export const generatedEnd = '<!-- End of the generated layout table. -->';

/** `expr` → `expr/`; a file stays a file; each with its reason when it has one. */
function importCell(rule: ModuleRule): string {
  if (rule.mayImport.includes('*')) return 'anything';
  if (rule.mayImport.length === 0) return 'nothing of ours';
  const list = rule.mayImport
    .map((target) => {
      const name = target.endsWith('.ts') ? `\`${target}\`` : `\`${target}/\``;
      const reason = rule.because?.[target];
      return reason === undefined ? name : `${name} (${reason})`;
    })
    .join(', ');
  if (rule.why === undefined) return list;
  return `${list} — ${rule.why.charAt(0).toLowerCase()}${rule.why.slice(1).replace(/\.$/, '')}`;
}

/** The layout table as Markdown, for the files directly in `src/` that `shared` names. */
export function layoutTable(shared: readonly string[]): string {
  const rows = Object.entries(modules).map(
    ([name, rule]) => `| \`src/${name}/\` | ${rule.owns} | ${importCell(rule)} |`,
  );
  const sharedList = shared.map((file) => `\`src/${file}\``).join(', ');
  const sharedOwns = shared
    .map((file) => `\`${file}\`: ${sharedFiles[file] ?? '(not described)'}`)
    .join('; ');
  return [
    '| path | what | may import |',
    '|---|---|---|',
    ...rows,
    `| ${sharedList} | shared by every module — ${sharedOwns} | each other only |`,
  ].join('\n');
}

/** The `.ts` files directly in `src/`, sorted. */
export function sharedFilesOnDisk(): string[] {
  return readdirSync(path.join(root, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => entry.name)
    .sort();
}

/** The architecture page with its generated table replaced by `table`. */
export function withLayoutTable(page: string, table: string): string {
  const start = page.indexOf(generatedStart);
  const end = page.indexOf(generatedEnd);
  if (start < 0 || end < start)
    throw new Error(
      `docs/architecture.md: the markers of the generated layout table are missing or out of order`,
    );
  return `${page.slice(0, start + generatedStart.length)}\n\n${table}\n\n${page.slice(end)}`;
}

/** The architecture page as it should be: read from disk, its layout table generated afresh. */
export function expectedArchitecturePage(): { actual: string; expected: string } {
  const actual = readFileSync(architecturePage, 'utf8');
  return { actual, expected: withLayoutTable(actual, layoutTable(sharedFilesOnDisk())) };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { actual, expected } = expectedArchitecturePage();
  if (process.argv.includes('--write')) {
    if (actual !== expected) writeFileSync(architecturePage, expected);
    console.log(
      actual === expected ? 'docs/architecture.md is up to date' : 'docs/architecture.md regenerated',
    );
  } else process.stdout.write(`${layoutTable(sharedFilesOnDisk())}\n`);
}
