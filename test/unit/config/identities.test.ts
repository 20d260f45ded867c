import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';
import { formatDiagnostic } from '../../../src/diagnostic.js';

function problems(text: string): string[] {
  try {
    parseConfig(text, 'gateway.yaml');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatDiagnostic);
    throw error;
  }
  return [];
}

const AUTH =
  'products: [{ id: shop }]\nauth: { issuer: "https://auth.example", baseUrl: "https://mcp.example" }';

describe('the identities section', () => {
  it('accepts one source of each type', () => {
    const text = [
      AUTH.replace(/\}$/, ', dataDir: .portcullis/auth }'),
      'identities:',
      '  default: entra',
      '  sources:',
      '    gateway: { type: portcullis, ttlSeconds: 600 }',
      '    entra:',
      '      type: client-credentials',
      '      tokenUrl: https://login.microsoftonline.com/contoso/oauth2/v2.0/token',
      '      clientId: app-1',
      '      clientSecret: { env: ENTRA_SECRET }',
      '      resourceAs: entra-scope',
      '    vm: { type: azure-imds, clientId: user-assigned-1 }',
      '    k8s:',
      '      type: federated',
      '      tokenFile: /var/run/secrets/azure/tokens/azure-identity-token',
      '      tokenUrl: https://login.microsoftonline.com/contoso/oauth2/v2.0/token',
      '      clientId: app-2',
    ].join('\n');
    expect(problems(text)).toEqual([]);
  });

  it('names file, line, column and key path of what a source lacks or does not know', () => {
    const text = [
      'identities:',
      '  sources:',
      '    idp: { type: client-credentials, tokenUrl: "https://idp.example/token", clientId: a }',
      '    jwt: { type: client-credentials, tokenUrl: "https://idp.example/token", clientId: a, clientAuth: private_key_jwt }',
      '    odd: { type: kerberos }',
    ].join('\n');
    expect(problems(text)).toEqual([
      expect.stringMatching(
        /^gateway\.yaml:3:\d+: identities\.sources\.idp(\.clientSecret)?: client_secret_basic needs clientSecret/,
      ),
      expect.stringMatching(
        /^gateway\.yaml:4:\d+: identities\.sources\.jwt(\.privateKey)?: private_key_jwt needs privateKey/,
      ),
      expect.stringMatching(
        /^gateway\.yaml:5:\d+: identities\.sources\.odd\.type: must be one of "portcullis", /,
      ),
    ]);
    expect(problems('identities: { default: nobody, sources: { vm: { type: azure-imds } } }')).toEqual([
      'gateway.yaml:1:15: identities.default: names no source "nobody" (configured: vm)',
    ]);
  });

  it('refuses a portcullis source whose signing keys the engine cannot read', () => {
    expect(problems(['identities:', '  sources:', '    gw: { type: portcullis }'].join('\n'))).toEqual([
      'gateway.yaml:3:5: identities.sources.gw: the portcullis identity is minted by the authorization server: configure auth',
    ]);
    expect(problems([AUTH, 'identities: { default: portcullis }'].join('\n'))).toEqual([
      expect.stringContaining(
        "identities.default: the portcullis identity signs with the authorization server's keys",
      ),
    ]);
  });

  it('refuses a delegated connection without the upstream provider, the sealing key or shared state', () => {
    const provider = [
      '  credentialProviders:',
      '    corp:',
      '      source: { type: client-credentials, tokenUrl: "https://id.example/token", clientId: gw, clientSecret: s }',
      '      connections:',
      '        me: { delegated: true }',
    ];
    expect(problems([AUTH, 'identities:', ...provider].join('\n'))).toEqual([
      'gateway.yaml:8:9: identities.credentialProviders.corp.connections.me: a delegated connection needs auth.identityProvider (users sign in through it), identities.delegatedTokenKey (seals the kept tokens), state.dataDir or state.redis (where the service keeps them for the engine)',
    ]);
    const complete = [
      AUTH.replace(
        /\}$/,
        ', dataDir: auth, identityProvider: { issuer: "https://id.example", clientId: gw, clientSecret: s } }',
      ),
      'state: { dataDir: data }',
      'identities:',
      '  delegatedTokenKey: { env: DELEGATED_TOKEN_KEY }',
      ...provider,
    ];
    expect(problems(complete.join('\n'))).toEqual([]);
  });
});
