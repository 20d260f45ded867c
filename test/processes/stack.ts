import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashPassword } from '../../src/auth/index.js';
import { freePort } from '../../src/config/plan.js';
import { type EchoBackend, startEchoBackend } from '../doubles/echo-backend.js';
import { descendantsOf, isAlive } from './process-tree.js';
import { startUp, type UpRun } from './up.js';
import { until } from './wait.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const exampleDir = path.join(root, 'examples', 'courses');

/** The users every stack knows; the passwords are test fixtures, hashed into the configuration at start. */
export const USERS = {
  alice: { username: 'alice', password: 'correct horse battery staple', name: 'Alice Example' },
  bob: { username: 'bob', password: 'tr0ub4dor&3', name: 'Bob Example' },
} as const;

export interface StackOptions {
  /** `auth.accessTokenTtlSeconds`; short in tests that watch a token expire. */
  readonly accessTokenTtlSeconds?: number;
  /** Extra keys appended to the `auth:` block (YAML, indented by two spaces). */
  readonly authYaml?: string;
  /** An `mcp:` block (YAML, top level). */
  readonly mcpYaml?: string;
  /** A `state:` block (YAML, top level); relative paths in it are in the stack's own directory. */
  readonly stateYaml?: string;
  /** An `identities:` block (YAML, top level). */
  readonly identitiesYaml?: string;
  /**
   * The authorization server's issuer and base URL when it is not this stack's own gateway: the public URL of a
   * load balancer in front of several stacks (default: the gateway URL).
   */
  readonly publicUrl?: string;
  /** More entries of `apis:` (YAML list items, indented by two spaces), e.g. MCP server APIs. */
  readonly apisYaml?: string;
  /** More entries of `products:` (YAML list items, indented by two spaces). */
  readonly productsYaml?: string;
  /** A `namedValues:` block (YAML, top level). */
  readonly namedValuesYaml?: string;
  /** More top-level blocks (YAML): a `management:` block, say. */
  readonly extraYaml?: string;
  /** The global policy (API Management's "All APIs"), inline XML. */
  readonly policyXml?: string;
  /**
   * The address the gateway listens on (default 127.0.0.1): another loopback address, or with `onHost` that
   * host's own address, in a test of several hosts.
   */
  readonly host?: string;
  /**
   * Runs the stack on another host, a network namespace (e.g. netns.ts `buildSegment`): `up` starts through
   * `commandPrefix`, `host` is that host's own address, and the in-process echo backend listens on `testAddress`,
   * the test process's address the host reaches. Envoy admin, the engine, the service and the course backend
   * listen on the host's own loopback, out of the test's reach.
   */
  readonly onHost?: { readonly commandPrefix: readonly string[]; readonly testAddress: string };
}

export interface Stack {
  /** The gateway listener: also issuer and base URL of the authorization server (unless `publicUrl` says). */
  readonly gatewayUrl: string;
  readonly issuer: string;
  /** The MCP endpoint URL, the access tokens' audience. */
  readonly mcpUrl: string;
  /** The example's course backend (behind the `courses` API), on the loopback of the stack's host. */
  readonly coursesBackendUrl: string;
  /**
   * A recording backend behind two more APIs: `echo` (in product `courses`) and `grades` (product `grades`). It
   * answers with a JSON echo of what it received, headers included, so tests can see the gateway's credential.
   */
  readonly echo: EchoBackend;
  /** The generated configuration `up` runs (and watches: editing it reloads the gateway). */
  readonly configFile: string;
  /** Everything `portcullis up` printed so far (its children's lines are prefixed with their names). */
  output(): string;
  /**
   * Ends `up` and starts it again on the same configuration and directory (so on the same state): `SIGINT` as a
   * user stops it, `SIGKILL` to every process of its family at once, as a crash or the OOM killer would.
   */
  restart(how: 'SIGINT' | 'SIGKILL'): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the whole stack the way a user does, with `portcullis up` on a generated configuration on free ports:
 * Envoy, the policy engine, the Koa service (OAuth 2.1 server + MCP endpoint) and the example's course backend,
 * plus an in-process echo backend. Resolves once `up` says the gateway is up.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const host = options.host ?? '127.0.0.1';
  // Another host's address is not one of the test's namespace: the port is picked on loopback here, which is as
  // good (nothing but this stack listens in that host's fresh namespace).
  const gatewayPort = await freePort(options.onHost ? '127.0.0.1' : host);
  const [adminPort, coursesPort] = [await freePort(), await freePort()];
  const echo = await startEchoBackend(undefined, options.onHost?.testAddress);
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-stack-'));
  const gatewayUrl = `http://${host}:${gatewayPort}`;
  const issuer = options.publicUrl ?? gatewayUrl;
  const users = await Promise.all(
    Object.values(USERS).map(
      async (user) =>
        `    - { username: ${user.username}, name: "${user.name}", passwordHash: "${await hashPassword(user.password)}" }`,
    ),
  );
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(
    file,
    `gateway: { http: { host: ${host}, port: ${gatewayPort} } }
admin: { port: ${adminPort} }
envoy: { concurrency: 1 }
apis:
  - id: courses
    name: Course API
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:${coursesPort}
    operations:
      - { id: list-courses, method: GET, urlTemplate: /api/Course, displayName: List courses }
      - { id: get-course, method: GET, urlTemplate: "/api/Course/{id}", displayName: Get one course }
      - id: create-course
        method: POST
        urlTemplate: /api/Course
        displayName: Create a course
        requestBody:
          type: object
          properties: { title: { type: string }, credits: { type: integer } }
          required: [title, credits]
  - id: echo
    urlSuffix: echo
    serviceUrl: ${echo.url}
    operations:
      - id: echo-thing
        method: GET
        urlTemplate: "/things/{name}"
        queryParameters: [{ name: verbose, type: boolean }]
        headerParameters: [{ name: X-Trace, description: a trace label }]
  - id: grades
    urlSuffix: grades
    serviceUrl: ${echo.url}
    operations:
      - { id: list-grades, method: GET, urlTemplate: /grades }
${options.apisYaml ?? ''}
products:
  - { id: courses, apis: [courses, echo] }
  - { id: grades, apis: [grades] }
${options.productsYaml ?? ''}
${options.namedValuesYaml ?? ''}
auth:
  issuer: ${issuer}
  baseUrl: ${issuer}
  cookieSecure: false
  accessTokenTtlSeconds: ${options.accessTokenTtlSeconds ?? 3600}
  users:
${users.join('\n')}
${options.authYaml ?? ''}
${options.mcpYaml ?? ''}
${options.stateYaml ?? ''}
${options.identitiesYaml ?? ''}
${options.extraYaml ?? ''}
${options.policyXml === undefined ? '' : `policy: ${JSON.stringify(options.policyXml)}`}
processes:
  - name: courses
    command: [node, backend.ts]
    cwd: ${exampleDir}
    env: { PORT: "${coursesPort}" }
    readyUrl: http://127.0.0.1:${coursesPort}/healthz
`,
  );

  // One process helper for every test that runs `up`: stop() ends the whole process family, not only `up`.
  const start = () => startUp(file, process.env, options.onHost?.commandPrefix, 'json');
  let run: UpRun = start();
  await run.waitFor('Press Ctrl-C to stop.');
  // What earlier runs printed, so output() keeps the whole story across restarts.
  let earlier = '';

  return {
    gatewayUrl,
    issuer,
    mcpUrl: `${issuer}/v1/mcp`,
    coursesBackendUrl: `http://127.0.0.1:${coursesPort}`,
    echo,
    configFile: file,
    output: () => earlier + run.output(),
    async restart(how) {
      if (how === 'SIGINT') {
        const code = await run.stop(10_000);
        if (code !== 0) throw new Error(`up did not stop cleanly on SIGINT (${code}):\n${run.output()}`);
      } else {
        const family = [run.child.pid!, ...descendantsOf(run.child.pid!)];
        for (const pid of family) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
        await until(() => !family.some(isAlive), 'every process of up to be gone after SIGKILL', 5000);
      }
      earlier += run.output();
      run = start();
      await run.waitFor('Press Ctrl-C to stop.');
    },
    async stop() {
      await run.stop(10_000);
      await echo.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** A stack's management API: the `management:` block that turns it on, and requests to it as its administrator. */
export interface ManagementAccess {
  /** For `StackOptions.extraYaml`: the listener on a free loopback port and one administrator, `admin`. */
  readonly yaml: string;
  readonly url: string;
  /** `method resource` as the administrator; `body`, when given, sent as JSON. */
  call(method: string, resource: string, body?: unknown): Promise<Response>;
}

export async function managementAccess(password: string): Promise<ManagementAccess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return {
    yaml: `management:
  listen: { host: 127.0.0.1, port: ${port} }
  administrators:
    - name: admin
      passwordHash: "${await hashPassword(password)}"`,
    url,
    call: (method, resource, body) =>
      fetch(`${url}${resource}`, {
        method,
        headers: {
          authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
  };
}
