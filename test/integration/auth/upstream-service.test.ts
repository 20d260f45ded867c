import { mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type * as oauth from 'oauth4webapi';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { loadConfigFile } from '../../../src/config/load.js';
import { createService } from '../../../src/service/service.js';
import { register } from '../../processes/auth-server.js';

/** auth.identityProvider from a configuration file to the login page of the service. */

let directory: string;
const ENV = 'PORTCULLIS_TEST_IDP_SECRET';

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-upstream-'));
});

afterEach(() => {
  delete process.env[ENV];
});

async function configFile(name: string, identityProvider: string): Promise<string> {
  const file = path.join(directory, name);
  await writeFile(
    file,
    `products: [{ id: courses }]
auth:
  issuer: http://127.0.0.1:8080
  baseUrl: http://127.0.0.1:8080
  cookieSecure: false
  identityProvider:
${identityProvider}`,
  );
  return file;
}

describe('auth.identityProvider in the service', () => {
  it('says where a client secret named by an unset environment variable is configured', async () => {
    const file = await configFile(
      'unset.yaml',
      `    issuer: https://id.example.com
    clientId: portcullis
    clientSecret: { env: ${ENV} }
`,
    );
    const error = await createService(await loadConfigFile(file), { gatewayUrl: 'http://127.0.0.1:1' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      `${file}:9:21: auth.identityProvider.clientSecret.env: environment variable ${ENV} is not set (it holds the identity provider's client secret)`,
    );
  });

  it('offers "Sign in with <name>" on the login page of the service', async () => {
    process.env[ENV] = 'from-the-environment';
    const file = await configFile(
      'ok.yaml',
      `    name: Corp ID
    issuer: https://id.example.com
    clientId: portcullis
    clientSecret: { env: ${ENV} }
`,
    );
    const service = await createService(await loadConfigFile(file), { gatewayUrl: 'http://127.0.0.1:1' });
    const http = service.app.listen(0, '127.0.0.1');
    try {
      await new Promise<void>((resolve) => http.once('listening', () => resolve()));
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
      // The configured URLs say :8080; the same paths are served on the listening port.
      const metadata = service.authorizationServer!.metadata();
      const registered = await register(
        { ...(metadata as object), registration_endpoint: `${url}/v1/register` } as oauth.AuthorizationServer,
        'none',
      );
      const page = await fetch(
        `${url}/v1/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: registered.client.client_id,
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
      );
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('action="http://127.0.0.1:8080/v1/authorize/upstream" id="upstream"');
      expect(html).toContain('Sign in with Corp ID');
      // No users configured: only the provider is offered.
      expect(html).not.toContain('name="password"');
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await service.close();
    }
  });
});
