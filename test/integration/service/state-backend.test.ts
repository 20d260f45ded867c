import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../src/config/load.js';
import { freePort } from '../../../src/config/plan.js';
import { createService, type Service } from '../../../src/service/service.js';
import { clientConnections, type RunningRedis, startRedis } from '../../processes/redis.js';
import { until } from '../../processes/wait.js';

/**
 * The service's stores (the authorization server's records, the MCP sessions) live in the backend of `state.redis`,
 * over the one connection the service process opens (state/backend.ts).
 */
let redis: RunningRedis;
let directory: string;

beforeAll(async () => {
  redis = await startRedis();
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-service-backend-'));
});

afterAll(async () => {
  await redis?.close();
  await rm(directory, { recursive: true, force: true });
});

describe('the service over state.redis', () => {
  it('opens one Redis connection for every store, and closes it with itself', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    await writeFile(
      path.join(directory, 'keys.json'),
      JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'backend-1', alg: 'ES256' }] }),
    );
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(
      file,
      `products: [{ id: courses }]
state:
  redis: { url: "${redis.url}", keyPrefix: "backend-test:", commandTimeoutMs: 2000 }
auth:
  issuer: ${url}
  baseUrl: ${url}
  cookieSecure: false
  signingKeys: { file: keys.json }
`,
    );
    const service: Service = await createService(await loadConfigFile(file), {
      gatewayUrl: 'http://127.0.0.1:1',
    });
    const http: Server = service.app.listen(port, '127.0.0.1');
    try {
      await new Promise<void>((resolve) => http.once('listening', () => resolve()));
      await until(() => clientConnections(redis) === 1, 'the service to connect');
      const registered = await fetch(`${url}/v1/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: ['http://127.0.0.1:43210/callback'],
          token_endpoint_auth_method: 'none',
        }),
      });
      expect(registered.status).toBe(201);
      // The registration went to Redis, through the connection already counted.
      expect(redis.cli('--scan', '--pattern', 'backend-test:*').trim()).not.toBe('');
      expect(clientConnections(redis)).toBe(1);
    } finally {
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await service.close();
    }
    await until(() => clientConnections(redis) === 0, 'the connection to close with the service');
  });
});
