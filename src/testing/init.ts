/**
 * `portcullis test --init`: a starter test file for each API of a configuration, one case per operation — the
 * request the operation takes, the backend stubbed with a 200, and the status expected — to edit into real tests.
 * The gateway's own credentials its policies ask for are stubbed too, so a starter passes before it is edited.
 */
import path from 'node:path';
import { stringify } from 'yaml';
import { namedValueTable } from '../config/gateway.js';
import type { LoadedConfig } from '../config/load.js';
import { policySource } from '../config/policy-source.js';
import { isExpression, readPolicyDocument } from '../policy/index.js';

export interface StarterFile {
  readonly file: string;
  readonly text: string;
}

/** What a starter stubs for each credential a policy asks for: a placeholder the edited test may check for. */
const STARTER_TOKEN = 'starter-token';

/** The credentials policies ask for: identities (by literal `client-id`, else `default`) and providers. */
interface CredentialsAskedFor {
  readonly identities: Set<string>;
  readonly providers: Set<string>;
}

export function starterTests(loaded: LoadedConfig): StarterFile[] {
  const { config } = loaded;
  // The global policy and the fragments apply to every API: read once.
  const everyApi = credentialsAskedFor(loaded, [
    { keys: ['policy'], value: config.policy },
    ...Object.entries(config.fragments).map(([id, value]) => ({ keys: ['fragments', id], value })),
  ]);
  return config.apis.map((api, apiIndex) => {
    const file = path.join(loaded.directory, `${api.id}.policy-test.yaml`);
    const cases = api.operations.map((operation) => {
      const id = operation.id ?? `${operation.method} ${operation.urlTemplate}`;
      const parameters = [...operation.urlTemplate.matchAll(/\{\*?([^}]+)\}/g)].map((m) => m[1]!);
      return {
        name: `${id} reaches the backend`,
        api: api.id,
        operation: id,
        ...(parameters.length > 0
          ? { request: { parameters: Object.fromEntries(parameters.map((name) => [name, '1'])) } }
          : {}),
        stubs: { backend: { status: 200, body: { ok: true } } },
        expect: { status: 200 },
      };
    });
    const header = [
      `# Starter tests for the API "${api.id}" (portcullis test --init). Run: portcullis test ${path.basename(file)}`,
      '# Each case sends one request through the compiled policies with the backend stubbed; see',
      '# docs/testing-policies.md for the request, context, stubs and expectations a case may give.',
    ].join('\n');
    const configFile = path.relative(loaded.directory, loaded.file) || path.basename(loaded.file);
    const own = credentialsAskedFor(loaded, [
      { keys: ['apis', apiIndex, 'policy'], value: api.policy },
      ...api.operations.map((operation, index) => ({
        keys: ['apis', apiIndex, 'operations', index, 'policy'],
        value: operation.policy,
      })),
    ]);
    const stubs = credentialStubs(everyApi, own);
    return {
      file,
      text: `${header}\n${stringify({ config: configFile, ...(stubs === undefined ? {} : { stubs }), cases }, { lineWidth: 120 })}`,
    };
  });
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
