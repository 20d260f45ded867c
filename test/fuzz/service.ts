import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hashPassword } from '../../src/auth/index.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createService, type Service } from '../../src/service/service.js';
import { type EchoBackend, startEchoBackend } from '../doubles/echo-backend.js';
import { discover, obtainTokens, register, type TestServer, USER } from '../integration/auth/harness.js';

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
