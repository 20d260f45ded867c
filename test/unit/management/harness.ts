import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashPassword } from '../../../src/auth/index.js';
import { createManagementApp } from '../../../src/management/index.js';
import { type ManagementStoreOptions, TestManagementStore } from '../../doubles/management-store.js';

export const administrator = { name: 'admin', password: 'correct horse battery staple' } as const;

/** scrypt is slow on purpose: one hash per test process is enough. */
let adminHash: Promise<string> | undefined;
export function administratorHash(): Promise<string> {
  adminHash ??= hashPassword(administrator.password);
  return adminHash;
}

export const apiPolicy = `<policies>
  <inbound>
    <base />
    <set-header name="x-api" exists-action="override">
      <value>courses</value>
    </set-header>
  </inbound>
  <backend>
    <base />
  </backend>
  <outbound>
    <base />
  </outbound>
  <on-error>
    <base />
  </on-error>
</policies>
`;

/** The operator's file: comments, flow style, an API with a policy file, an operation without id, secrets. */
export const gatewayYaml = `# The operator's own gateway file.
gateway:
  http: { host: 127.0.0.1, port: 8080 }

# Named values: one plain, one secret.
namedValues:
  greeting: hello
  customer-key: { value: very-secret-customer-key, secret: true }

backends:
  - { id: bulk, url: "http://127.0.0.1:8082" } # the bulk service

apis:
  # The course catalogue.
  - id: courses
    name: Course API
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:8081
    policy: policies/courses.xml
    operations:
      - id: list-courses
        method: GET
        urlTemplate: /api/Course
      - method: GET
        urlTemplate: "/api/Course/{id}"
  - id: staff
    urlSuffix: staff
    serviceUrl: http://127.0.0.1:8081

products:
  - { id: starter, name: Starter, apis: [courses] } # keep this product
  - id: internal
    apis: [courses, staff]

groups:
  - { id: teachers, name: Teachers }

users:
  - { id: alice, email: alice@example.com, groups: [teachers] }

subscriptions:
  - id: alice-starter
    scope: { product: starter }
    user: alice
    primaryKey: alice-primary-key-0001
    secondaryKey: alice-secondary-key-0001
  - id: staff-direct
    scope: { api: staff }
    primaryKey: staff-primary-key-00001

fragments:
  stamp: |
    <fragment>
      <set-header name="x-stamp" exists-action="override"><value>1</value></set-header>
    </fragment>
`;

export function fixtureFiles(): Record<string, string> {
  return { 'gateway.yaml': gatewayYaml, 'policies/courses.xml': apiPolicy };
}

export interface Response {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body as JSON (undefined when it is not JSON). */
  readonly json: any;
}

export interface RequestOptions {
  /** A JSON body (sent as application/json), or text with `type`. */
  readonly body?: unknown;
  readonly type?: string;
  readonly headers?: Record<string, string>;
  /** Credentials: the administrator's by default; `null` sends none. */
  readonly auth?: { readonly name: string; readonly password: string } | null;
}

export interface ManagementHarness {
  readonly store: TestManagementStore;
  readonly url: string;
  /** The audit lines the app wrote. */
  readonly audit: string[];
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  /** The text of a file of the configuration's folder, as on disk now. */
  read(name: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * The real management app over real HTTP on a loopback port, with a real store over a temporary folder (only Envoy
 * and the engines are missing). `gateway.yaml` gets a management section with the test administrator appended.
 */
export async function startManagement(
  files: Readonly<Record<string, string>> = fixtureFiles(),
  options: ManagementStoreOptions = {},
): Promise<ManagementHarness> {
  const management = `\nmanagement:\n  administrators:\n    - name: ${administrator.name}\n      passwordHash: "${await administratorHash()}"\n`;
  const store = await TestManagementStore.create(
    { ...files, 'gateway.yaml': `${files['gateway.yaml'] ?? ''}${management}` },
    options,
  );
  const audit: string[] = [];
  const app = createManagementApp({ store, audit: (line) => audit.push(line) });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    store,
    url,
    audit,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const auth = options.auth === undefined ? administrator : options.auth;
      if (auth) headers.authorization = basic(auth.name, auth.password);
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
        headers['content-type'] ??= options.type ?? 'application/json';
      }
      const response = await fetch(`${url}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
      });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, headers: response.headers, text, json };
    },
    read: (name) => readFile(store.path(name), 'utf8'),
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await store.dispose();
    },
  };
}

export function basic(name: string, password: string): string {
  return `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
}

/** The messages of an error answer's details. */
export function details(response: Response): string[] {
  return ((response.json?.error?.details ?? []) as { message: string }[]).map((detail) => detail.message);
}
