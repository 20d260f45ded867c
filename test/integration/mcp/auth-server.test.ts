import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthorizationServer, createAuthorizationServer } from '../../../src/auth/index.js';
import {
  FakeCaller,
  initializeMessage,
  MutableCatalog,
  type RunningApp,
  sampleOperations,
  send,
  startApp,
} from '../../doubles/mcp.js';

/**
 * The contract with src/auth: its `verifyAccessToken` is the endpoint's verifier as is, and the tokens it
 * issues for the endpoint's URL are accepted (and revoked ones refused).
 */
describe('with the real authorization server as verifier', () => {
  let as: AuthorizationServer;
  let app: RunningApp;
  const issuer = 'https://auth.example.test';

  beforeAll(async () => {
    let resolveUrl: (url: string) => void;
    const urlKnown = new Promise<string>((r) => (resolveUrl = r));
    app = await startApp((url) => {
      resolveUrl(url);
      return {
        issuer,
        verifier: { verifyAccessToken: (token, expected) => as.verifyAccessToken(token, expected) },
        catalog: new MutableCatalog(sampleOperations()),
        caller: new FakeCaller(),
        serverInfo: { name: 'portcullis', version: '0.1.0' },
      };
    });
    as = await createAuthorizationServer({
      issuer,
      baseUrl: issuer,
      resource: [await urlKnown],
      products: ['courses', 'admin'],
      users: [],
    });
  });
  afterAll(async () => {
    await app.close();
    await as.close();
  });

  it('accepts its token for this resource: the SDK client lists the granted tools', async () => {
    const token = await as.mintServiceToken({
      subject: 'alice',
      audience: app.url,
      scope: ['read:courses-work'],
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(app.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['getCourse', 'listCourses']);
    await client.close();
  });

  it('refuses its token for another resource with 401 invalid_token', async () => {
    const token = await as.mintServiceToken({
      subject: 'alice',
      audience: 'https://gateway.example.test/api',
      scope: ['read:courses-work'],
    });
    const res = await send(app.url, initializeMessage(), { token });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", /);
  });
});
