import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type fc from 'fast-check';
import { hashPassword } from '../../src/auth/index.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createService, type Service } from '../../src/service/service.js';
import { type EchoBackend, startEchoBackend } from '../doubles/echo-backend.js';
import { discover, obtainTokens, register, type TestServer, USER } from '../processes/auth-server.js';

export interface FuzzService {
  readonly url: string;
  readonly mcpUrl: string;
  /** An access token for the MCP endpoint with every scope, obtained through the real authorization code flow. */
  readonly accessToken: string;
  stop(): Promise<void>;
}

/**
 * The real Koa service (OAuth 2.1 server and MCP endpoint) for a small configuration, on a free loopback port, with
 * an echo backend standing in for the gateway that tool calls go through.
 */
export async function startFuzzService(): Promise<FuzzService> {
  const echo: EchoBackend = await startEchoBackend();
  let service: Service | undefined;
  // A plain server handing each request to the service's own Koa callback, as `portcullis service` does: an outer
  // Koa app would answer (and end) every response itself, under the service's event streams.
  let handle: RequestListener = (_request, response) => response.writeHead(503).end();
  const http = createServer((request, response) => handle(request, response)).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => http.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-fuzz-'));
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(
    file,
    `apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: ${echo.url}
    operations:
      - { id: get-course, method: GET, urlTemplate: "/api/Course/{id}" }
      - id: create-course
        method: POST
        urlTemplate: /api/Course
        requestBody: { type: object, properties: { title: { type: string } } }
      - { id: open, method: GET, urlTemplate: "/open/{*rest}" }
products:
  - { id: courses, apis: [courses] }
auth:
  issuer: ${url}
  baseUrl: ${url}
  users:
    - { username: ${USER.username}, passwordHash: "${await hashPassword(USER.password)}" }
`,
  );
  service = await createService(await loadConfigFile(file), { gatewayUrl: echo.url });
  handle = service.app.callback();
  const server = { url, issuer: url, resource: `${url}/v1/mcp` } as TestServer;
  const as = await discover(server);
  const client = await register(as, 'none');
  const { tokens } = await obtainTokens(server, as, client);
  return {
    url,
    mcpUrl: `${url}/v1/mcp`,
    accessToken: tokens.access_token,
    async stop() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await service?.close();
      await echo.close();
    },
  };
}

/**
 * How long each fuzz property runs. `npm test` gives every property a small, bounded budget so the suite stays fast;
 * `npm run fuzz` raises it (FUZZ_RUNS, FUZZ_SECONDS). A failure prints fast-check's seed and path: set FUZZ_SEED
 * (and the path fast-check prints) to replay exactly that case.
 */
export function fuzzParameters<T>(defaults: { runs: number; seconds: number }): fc.Parameters<T> {
  const runs = Number(process.env.FUZZ_RUNS ?? defaults.runs);
  const seconds = Number(process.env.FUZZ_SECONDS ?? defaults.seconds);
  const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
  return {
    numRuns: runs,
    // Stop early, successfully, when the time budget is spent: the run count is an upper bound.
    interruptAfterTimeLimit: seconds * 1000,
    markInterruptAsFailure: false,
    ...(seed === undefined ? {} : { seed }),
    ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
  };
}

/** The vitest timeout for a property with this budget: its time limit plus room to finish the run in flight. */
export function testTimeout(defaults: { seconds: number }): number {
  return (Number(process.env.FUZZ_SECONDS ?? defaults.seconds) + 30) * 1000;
}

/** A Node stack frame, as it would appear in a body or message that leaked one. */
export const STACK_FRAME = /\n\s+at .+[(:]\d+:\d+\)?/;
