/**
 * `portcullis test --init`: a starter test file for each API of a configuration, one case per operation — the
 * request a client would send (with a configured subscription key when a subscription admits the API), the backend
 * stubbed with a 200 — whose expectation is the answer the policies give today, found by running the case. The
 * gateway's own credentials its policies ask for are stubbed too. A starter therefore passes as written, and is
 * there to be edited into real tests; an API no case can be made for gets no file, and the reason.
 */
import path from 'node:path';
import { stringify } from 'yaml';
import { namedValueTable } from '../config/gateway.js';
import type { LoadedConfig } from '../config/load.js';
import { policySource } from '../config/policy-source.js';
import { isExpression, readPolicyDocument } from '../policy/index.js';
import { starterRequest } from './starter-request.js';
import { passed, runTestFiles } from './suite.js';
import { parseTestFile } from './test-file.js';

export type Starter =
  | { readonly file: string; readonly text: string; readonly left: readonly string[] }
  | { readonly api: string; readonly skipped: string };

/** What a starter stubs for each credential a policy asks for: a placeholder the edited test may check for. */
const STARTER_TOKEN = 'starter-token';

/** The credentials policies ask for: identities (by literal `client-id`, else `default`) and providers. */
interface CredentialsAskedFor {
  readonly identities: Set<string>;
  readonly providers: Set<string>;
}

interface Draft {
  readonly api: string;
  readonly file: string;
  readonly header: string;
  readonly body: { config: string; stubs?: object; cases: DraftCase[] };
}

interface DraftCase {
  name: string;
  api: string;
  operation: string;
  request?: object;
  stubs: object;
  expect: Record<string, unknown>;
}

export async function starterTests(loaded: LoadedConfig): Promise<Starter[]> {
  const { config } = loaded;
  // The global policy and the fragments apply to every API: read once.
  const everyApi = credentialsAskedFor(loaded, [
    { keys: ['policy'], value: config.policy },
    ...Object.entries(config.fragments).map(([id, value]) => ({ keys: ['fragments', id], value })),
  ]);
  const configFile = path.relative(loaded.directory, loaded.file) || path.basename(loaded.file);
  const skipped: Starter[] = [];
  const drafts: Draft[] = [];
  config.apis.forEach((api, apiIndex) => {
    if (api.operations.length === 0) {
      skipped.push({
        api: api.id,
        skipped: 'it has no operations, and a case is made from one (write a case with request.path by hand)',
      });
      return;
    }
    const file = path.join(loaded.directory, `${api.id}.policy-test.yaml`);
    const cases = api.operations.map((operation) => {
      const id = operation.id ?? `${operation.method} ${operation.urlTemplate}`;
      const request = starterRequest(config, api, operation);
      return {
        name: id,
        api: api.id,
        operation: id,
        ...(Object.keys(request).length > 0 ? { request } : {}),
        stubs: { backend: { status: 200, body: { ok: true } } },
        expect: {},
      };
    });
    const own = credentialsAskedFor(loaded, [
      { keys: ['apis', apiIndex, 'policy'], value: api.policy },
      ...api.operations.map((operation, index) => ({
        keys: ['apis', apiIndex, 'operations', index, 'policy'],
        value: operation.policy,
      })),
    ]);
    const stubs = credentialStubs(everyApi, own);
    const header = [
      `# Starter tests for the API "${api.id}" (portcullis test --init). Run: portcullis test ${path.basename(file)}`,
      '# Each case sends one request through the compiled policies with the backend stubbed; its expectations are',
      '# what the policies answered when the file was written. See docs/testing-policies.md for the request,',
      '# context, stubs and expectations a case may give.',
    ].join('\n');
    drafts.push({
      api: api.id,
      file,
      header,
      body: { config: configFile, ...(stubs ? { stubs } : {}), cases },
    });
  });
  const recorded = await recordAnswers(drafts, loaded.file);
  return [...recorded, ...skipped];
}

const render = (draft: Draft) => `${draft.header}\n${stringify(draft.body, { lineWidth: 120 })}`;

/**
 * Runs each draft's cases and writes today's answer in as the expectation: the status, and whether the backend was
 * called. A case that cannot run (a credential or service the case cannot stub) is left out, saying why; the
 * finished files are run once more, and a case that does not pass again (an answer that changes from run to run)
 * is left out too.
 */
async function recordAnswers(drafts: readonly Draft[], configFile: string): Promise<Starter[]> {
  const left = new Map(drafts.map((draft) => [draft.file, [] as string[]]));
  const outcomes = await runDrafts(drafts, configFile);
  for (const draft of drafts) {
    draft.body.cases = draft.body.cases.filter((testCase) => {
      const result = outcomes.get(`${draft.file}\0${testCase.name}`);
      const problem =
        result === undefined
          ? 'it did not run'
          : (result.error ??
            (result.outcome!.missing.length > 0
              ? `it needs ${result.outcome!.missing.map((missing) => `${missing.key} (${missing.wanted})`).join(', ')}`
              : undefined));
      if (problem !== undefined) {
        left.get(draft.file)!.push(`${testCase.name}: ${problem}`);
        return false;
      }
      const outcome = result!.outcome!;
      const status = outcome.response.status;
      testCase.expect = { status, ...(outcome.backend === undefined ? { backend: false } : {}) };
      testCase.name = `${testCase.name} answers ${status}${outcome.backend === undefined ? ' without calling the backend' : ''}`;
      return true;
    });
  }
  const again = await runDrafts(drafts, configFile);
  for (const draft of drafts) {
    draft.body.cases = draft.body.cases.filter((testCase) => {
      const result = again.get(`${draft.file}\0${testCase.name}`);
      if (result !== undefined && passed(result)) return true;
      left.get(draft.file)!.push(`${testCase.name}: a second run answered differently`);
      return false;
    });
  }
  return drafts.map((draft) => {
    const reasons = left.get(draft.file)!;
    if (draft.body.cases.length === 0)
      return { api: draft.api, skipped: `no case passes as written (${reasons.join('; ')})` };
    return { file: draft.file, text: render(draft), left: reasons };
  });
}

async function runDrafts(drafts: readonly Draft[], configFile: string) {
  const files = drafts
    .filter((draft) => draft.body.cases.length > 0)
    .map((draft) => parseTestFile(render(draft), draft.file));
  const byCase = new Map<string, Awaited<ReturnType<typeof runTestFiles>>['cases'][number]>();
  if (files.length === 0) return byCase;
  const suite = await runTestFiles(files, configFile);
  // The suite names files relative to the working folder; the drafts' order is the suite's.
  let index = 0;
  for (const file of files) {
    for (const testCase of file.tests.cases)
      byCase.set(`${file.file}\0${testCase.name}`, suite.cases[index++]!);
  }
  return byCase;
}

/**
 * The `tokens` and `authorizations` stubs for the credentials asked for: any resource of each identity, any
 * connection of each provider.
 */
function credentialStubs(...asked: CredentialsAskedFor[]):
  | {
      tokens?: Record<string, Record<string, string>>;
      authorizations?: Record<string, Record<string, string>>;
    }
  | undefined {
  const anyOf = (names: Iterable<string>) =>
    Object.fromEntries([...names].map((name) => [name, { '*': STARTER_TOKEN }]));
  const tokens = anyOf(asked.flatMap((credentials) => [...credentials.identities]));
  const authorizations = anyOf(asked.flatMap((credentials) => [...credentials.providers]));
  const stubs = {
    ...(Object.keys(tokens).length > 0 ? { tokens } : {}),
    ...(Object.keys(authorizations).length > 0 ? { authorizations } : {}),
  };
  return Object.keys(stubs).length > 0 ? stubs : undefined;
}

/**
 * The credentials the policy documents `sources` (configuration values: file names or inline XML) ask for: each identity a
 * `authentication-managed-identity` `client-id` names literally (`default` for none, or one an expression computes,
 * which falls back to it), each literal `provider-id` of `get-authorization-context`.
 */
function credentialsAskedFor(
  loaded: LoadedConfig,
  sources: readonly { keys: (string | number)[]; value: string | undefined }[],
): CredentialsAskedFor {
  // The names are all a starter needs: an unset environment value is the loader's to report.
  const namedValues = namedValueTable(loaded.config, () => {});
  const asked: CredentialsAskedFor = { identities: new Set(), providers: new Set() };
  type Element = ReturnType<typeof readPolicyDocument>['root'];
  const walk = (element: Element): void => {
    const literal = (name: string) => {
      const value = element.attributes.find((attribute) => attribute.name === name)?.value;
      return value === undefined || isExpression(value) ? undefined : value;
    };
    if (element.name === 'authentication-managed-identity')
      asked.identities.add(literal('client-id') ?? 'default');
    const provider = element.name === 'get-authorization-context' ? literal('provider-id') : undefined;
    if (provider !== undefined) asked.providers.add(provider);
    for (const child of element.children) if (child.kind === 'element') walk(child);
  };
  for (const { keys, value } of sources) {
    if (value === undefined) continue;
    const { file, text } = policySource(loaded, keys, value);
    if (text !== undefined)
      walk(readPolicyDocument(text, { file, ...(namedValues ? { namedValues } : {}) }).root);
  }
  return asked;
}
