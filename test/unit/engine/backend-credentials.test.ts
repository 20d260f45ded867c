import { describe, expect, it } from 'vitest';
import type { ResolvedBackend } from '../../../src/config/backend-credentials.js';
import { withBackendCredentials } from '../../../src/engine/backend-credentials.js';
import { VariablesModel } from '../../../src/expr/index.js';
import type { ForwardedRequest } from '../../../src/policy/index.js';
import { RequestSecrets } from '../../../src/policy/index.js';

const request: ForwardedRequest = {
  method: 'POST',
  pathAndQuery: '/chat?api-version=1&code=client',
  headers: [
    ['Api-Key', 'client-key'],
    ['Content-Type', 'application/json'],
  ],
  body: undefined,
  bodyChanged: false,
  backend: { baseUrl: 'http://127.0.0.1/x', backendId: 'b' },
  forward: { timeoutMs: 1000 } as ForwardedRequest['forward'],
  retry: undefined,
};

const secrets = () =>
  new RequestSecrets([], { headers: [], url: 'http://gateway.example/x' }, new VariablesModel());

/** A backend entity's credentials (https://learn.microsoft.com/azure/api-management/backends): what the backend gets. */
describe('backend credentials', () => {
  it('replaces the client’s header and query parameter of the same name, and sets Authorization', async () => {
    const backend: ResolvedBackend = {
      id: 'b',
      url: 'http://127.0.0.1/x',
      credentials: {
        header: { 'api-key': ['backend-key'] },
        query: { code: ['backend-code'] },
        authorization: { scheme: 'Basic', parameter: 'dXNlcjpwYXNz' },
      },
      secretValues: ['backend-key', 'backend-code', 'dXNlcjpwYXNz'],
    };
    const held = secrets();
    const sent = await withBackendCredentials(request, backend, undefined, held);
    expect(sent.headers).toEqual([
      ['api-key', 'backend-key'],
      ['Content-Type', 'application/json'],
      ['Authorization', 'Basic dXNlcjpwYXNz'],
    ]);
    expect(sent.pathAndQuery).toBe('/chat?api-version=1&code=backend-code');
    // Every value is one of the request's secrets: what the request logs shows none of them.
    expect(held.redact('key backend-key, code backend-code')).toBe('key ***, code ***');
  });

  it('sends a token of the gateway’s identities for the managed identity’s resource, as a secret', async () => {
    const backend: ResolvedBackend = {
      id: 'b',
      url: 'http://127.0.0.1/x',
      credentials: { managedIdentity: { resource: 'https://cognitiveservices.azure.com' } },
      secretValues: [],
    };
    const asked: unknown[] = [];
    const identities = {
      token: async (what: { resource: string; clientId?: string }) => {
        asked.push(what);
        return { token: 'the-token', expiresAt: Date.now() + 60_000 };
      },
    };
    const held = secrets();
    const sent = await withBackendCredentials(request, backend, identities, held);
    expect(asked).toEqual([{ resource: 'https://cognitiveservices.azure.com' }]);
    expect(sent.headers).toContainEqual(['Authorization', 'Bearer the-token']);
    expect(held.redact('Bearer the-token')).toBe('Bearer ***');
  });

  it('leaves a request to a backend without credentials as it is', async () => {
    expect(await withBackendCredentials(request, undefined, undefined, secrets())).toBe(request);
  });
});
