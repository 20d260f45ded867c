import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { hashPassword } from '../../src/auth/index.js';
import { freePort } from '../../src/config/plan.js';
import { sendFrom } from '../doubles/source-address.js';
import { countSaidBy, saidBy, startUp, type UpRun } from '../processes/up.js';
import { until } from '../processes/wait.js';

/**
 * The management API as an operator uses it: `portcullis up` with a `management` section, every call through
 * Envoy's management listener, every change checked by calling the gateway afterwards.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const exampleDir = path.join(root, 'examples', 'courses');
const password = 'correct horse battery staple';

/** A policy that marks every answer with `x-mark: <value>` (the value may be an expression or a named value). */
const marking = (value: string) =>
  `<policies>\n  <inbound><base /></inbound>\n  <backend><base /></backend>\n  <outbound>\n    <base />\n    <set-header name="x-mark" exists-action="override"><value>${value}</value></set-header>\n  </outbound>\n  <on-error><base /></on-error>\n</policies>\n`;

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly json: any;
}

/** One request on its own connection: connections to an Envoy being hot-restarted close once it has drained. */
function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; auth?: string | false } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth !== false) {
    headers.authorization = `Basic ${Buffer.from(options.auth ?? `admin:${password}`).toString('base64')}`;
  }
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: options.method ?? 'GET', headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: response.statusCode!, headers: response.headers, text, json });
      });
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

describe('the management API through Envoy, on a running gateway', () => {
  let run: UpRun;
  let directory: string;
  let configFile: string;
  let management: string;
  let gateway: string;

  /** A management call; a change answered 202 (Envoy restarting) is followed to its outcome. */
  async function manage(
    method: string,
    resource: string,
    body?: unknown,
    contentType = 'application/json',
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const answer = await call(`${management}${resource}`, {
      method,
      headers: { ...(text === undefined ? {} : { 'content-type': contentType }), ...headers },
      ...(text === undefined ? {} : { body: text }),
    });
    if (answer.status !== 202) return answer;
    const location = String(answer.headers.location);
    expect(location).toMatch(/^\/operations\/[0-9a-f-]{36}$/);
    let operation: Answer | undefined;
    await until(
      async () => {
        operation = await call(`${management}${location}`);
        return operation.json?.status !== 'InProgress';
      },
      `${method} ${resource} to be applied`,
      60_000,
    );
    expect(operation!.json).toMatchObject({ status: 'Succeeded' });
    return answer;
  }

  beforeAll(async () => {
    const ports = {
      gateway: await freePort(),
      admin: await freePort(),
      management: await freePort(),
      backend: await freePort(),
    };
    management = `http://127.0.0.1:${ports.management}`;
    gateway = `http://127.0.0.1:${ports.gateway}`;
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-management-'));
    configFile = path.join(directory, 'gateway.yaml');
    await writeFile(path.join(directory, 'courses.xml'), marking('{{mark}}'));
    await writeFile(
      configFile,
      `# Operators keep notes in this file: the management API must leave them where they are.
gateway: { http: { host: 127.0.0.1, port: ${ports.gateway} } }
admin: { host: 127.0.0.1, port: ${ports.admin} }
envoy: { drainSeconds: 1, parentShutdownSeconds: 2 }
management:
  listen: { host: 127.0.0.1, port: ${ports.management} }
  administrators:
    - name: admin
      passwordHash: "${await hashPassword(password)}"
namedValues:
  mark: one
apis:
  - id: courses # the spec's Course API
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:${ports.backend}
    policy: courses.xml
    operations:
      - { id: list, method: GET, urlTemplate: /api/Course }
      - { id: get, method: GET, urlTemplate: "/api/Course/{id}" }
processes:
  - name: courses
    command: [node, backend.ts]
    cwd: ${exampleDir}
    env: { PORT: "${ports.backend}" }
    readyUrl: http://127.0.0.1:${ports.backend}/healthz
`,
    );
    run = startUp(configFile);
    await run.waitFor('Press Ctrl-C to stop.');
    expect(run.output()).toContain(`management    http://127.0.0.1:${ports.management}/`);
  }, 60_000);

  afterAll(async () => {
    if (!run) return;
    const code = await run.stop();
    expect(code).toBe(0);
  }, 30_000);

  it('keys the sign-in limit on the address Envoy saw: forged headers escape nothing, another client is not blocked', async () => {
    const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;
    const [attacker, other] = ['127.0.0.21', '127.0.0.22'];
    for (let attempt = 0; attempt < 10; attempt++) {
      const forged = `198.51.100.${attempt}`;
      const guess = await sendFrom(attacker, `${management}/apis`, {
        headers: {
          authorization: basic(`admin:guess-${attempt}`),
          'x-forwarded-for': forged,
          'x-portcullis-client-address': forged,
        },
      });
      expect(guess.status).toBe(401);
    }
    const blocked = await sendFrom(attacker, `${management}/apis`, {
      headers: { authorization: basic(`admin:${password}`), 'x-forwarded-for': '203.0.113.9' },
    });
    expect(blocked.status).toBe(429);
    const answer = await sendFrom(other, `${management}/apis`, {
      headers: { authorization: basic(`admin:${password}`) },
    });
    expect(answer.status).toBe(200);
  });

  it('answers administrators only; Envoy readiness stays readable', async () => {
    const anonymous = await call(`${management}/apis`, { auth: false });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Basic realm="Portcullis management"/);
    expect(anonymous.json.error.code).toBe('Unauthorized');
    expect((await call(`${management}/apis`, { auth: 'admin:wrong' })).status).toBe(401);
    expect((await call(`${management}/apis`, { auth: `root:${password}` })).status).toBe(401);

    const apis = await call(`${management}/apis`);
    expect(apis.status).toBe(200);
    expect(apis.json.value.map((api: { id: string }) => api.id)).toEqual(['courses']);
    expect(apis.json.value[0]).toMatchObject({ urlSuffix: 'courses', policy: 'courses.xml' });

    const ready = await call(`${management}/ready`, { auth: false });
    expect(ready.status).toBe(200);
    expect(ready.text).toContain('LIVE');
    expect(run.output()).toMatch(/^\[up\] \S+ WARN +management: sign-in refused administrator=admin/m);
    expect(run.output()).not.toContain('wrong');
  });

  it('replaces a policy with raw XML: written to its file, the next requests run it', async () => {
    expect((await call(`${gateway}/courses/api/Course`)).headers['x-mark']).toBe('one');
    const xml = marking('@("two-" + context.Operation.Id)');
    const put = await manage(
      'PUT',
      '/apis/courses/policies/policy',
      xml,
      'application/vnd.ms-azure-apim.policy.raw+xml',
    );
    // No route or cluster changed: applied before the answer, without restarting Envoy.
    expect(put.status).toBe(200);
    expect((await call(`${gateway}/courses/api/Course`)).headers['x-mark']).toBe('two-list');
    expect(readFileSync(path.join(directory, 'courses.xml'), 'utf8')).toBe(xml);
    const read = await call(`${management}/apis/courses/policies/policy`);
    expect(read.text).toBe(xml);
    expect(read.headers['content-type']).toMatch(/^application\/xml/);
    expect(run.output()).toMatch(/management: admin PUT \/apis\/courses\/policies\/policy → 200/);
  });

  it('refuses a broken policy with the line and column in the XML sent, and keeps the running one', async () => {
    const before = readFileSync(configFile, 'utf8');
    const broken =
      '<policies>\n  <inbound>\n    <rate-limit calls="many" renewal-period="10" />\n  </inbound>\n</policies>\n';
    const put = await manage('PUT', '/apis/courses/policies/policy', broken, 'application/xml');
    expect(put.status).toBe(400);
    expect(put.json.error.code).toBe('ValidationError');
    const details: string[] = put.json.error.details.map((detail: { message: string }) => detail.message);
    expect(details.some((line) => line.includes('courses.xml:3:') && line.includes('calls'))).toBe(true);

    const invalidBody = await manage('PUT', '/apis/third', {
      urlSuffix: 'third',
      serviceUrl: 'ftp://example.org',
    });
    expect(invalidBody.status).toBe(400);
    expect(invalidBody.json.error.details[0].message).toMatch(
      /^request body:1:\d+: serviceUrl: must be an http:\/\/ or https:\/\/ URL/,
    );

    expect((await call(`${gateway}/courses/api/Course`)).headers['x-mark']).toBe('two-list');
    expect(readFileSync(configFile, 'utf8')).toBe(before);
    expect(readFileSync(path.join(directory, 'courses.xml'), 'utf8')).toContain('two-');
  });

  it('keeps a secret named value out of every read, and policies use the new value', async () => {
    await manage('PUT', '/apis/courses/policies/policy', marking('{{mark}}'), 'application/xml');
    const put = await manage('PUT', '/namedValues/mark', { value: 'hidden-three', secret: true });
    expect(put.status).toBe(200);
    expect(put.text).not.toContain('hidden-three');
    expect((await call(`${gateway}/courses/api/Course`)).headers['x-mark']).toBe('hidden-three');
    const list = await call(`${management}/namedValues`);
    expect(list.json.value).toEqual([{ id: 'mark', secret: true }]);
    const value = await manage('POST', '/namedValues/mark/listValue');
    expect(value.json).toEqual({ value: 'hidden-three' });
  });

  it('publishes a named backend and a new API in the running Envoy, answering once they serve', async () => {
    const backendUrl = parse(readFileSync(configFile, 'utf8')).apis[0].serviceUrl;
    const backend = await manage('PUT', '/backends/alternate', { url: backendUrl });
    // A new cluster reaches the running Envoy: the change is answered once it is applied, not accepted for later.
    expect(backend.status).toBe(201);
    const api = await manage('PUT', '/apis/second', {
      urlSuffix: 'second',
      serviceUrl: 'http://127.0.0.1:1',
      policy:
        '<policies>\n  <inbound>\n    <base />\n    <set-backend-service backend-id="alternate" />\n  </inbound>\n  <backend><base /></backend>\n  <outbound><base /></outbound>\n  <on-error><base /></on-error>\n</policies>\n',
      operations: [{ id: 'get', method: 'GET', urlTemplate: '/api/Course/{id}' }],
    });
    expect(api.status).toBe(201);
    const answer = await call(`${gateway}/second/api/Course/2`);
    expect(answer.status).toBe(200);
    expect(answer.headers['x-backend-saw-path']).toBe('/api/Course/2');

    // The operator's comments are where they were; the new entries are in the file.
    const text = readFileSync(configFile, 'utf8');
    expect(text).toContain('# Operators keep notes in this file');
    expect(text).toContain("- id: courses # the spec's Course API");
    expect(parse(text).apis.map((entry: { id: string }) => entry.id)).toEqual(['courses', 'second']);
  }, 90_000);

  it('adds and removes an operation: an unknown one is answered 404 by the gateway', async () => {
    const added = await manage('PUT', '/apis/second/operations/list', {
      method: 'GET',
      urlTemplate: '/api/Course',
    });
    expect(added.status).toBe(201);
    expect((await call(`${gateway}/second/api/Course`)).status).toBe(200);
    expect((await manage('DELETE', '/apis/second/operations/list')).status).toBe(204);
    expect((await call(`${gateway}/second/api/Course`)).status).toBe(404);
    expect((await manage('GET', '/apis/second/operations/list')).status).toBe(404);
  });

  it('requires subscriptions through a product, and keys work as listed and regenerated', async () => {
    expect(
      (await manage('PUT', '/products/gold', { name: 'Gold', apis: ['courses'], subscriptionRequired: true }))
        .status,
    ).toBe(201);
    expect((await manage('PATCH', '/apis/courses', { subscriptionRequired: true })).status).toBe(200);
    expect((await call(`${gateway}/courses/api/Course`)).status).toBe(401);

    const created = await manage('PUT', '/subscriptions/s1', { scope: { product: 'gold' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ id: 's1', scope: { product: 'gold' } });
    const secrets = await manage('POST', '/subscriptions/s1/listSecrets');
    const { primaryKey, secondaryKey } = secrets.json as { primaryKey: string; secondaryKey: string };
    expect(primaryKey).toMatch(/^[0-9a-f]{32}$/);
    const withKey = (key: string) =>
      call(`${gateway}/courses/api/Course`, { auth: false, headers: { 'ocp-apim-subscription-key': key } });
    expect((await withKey(primaryKey)).status).toBe(200);
    expect((await withKey(secondaryKey)).status).toBe(200);

    expect((await manage('POST', '/subscriptions/s1/regeneratePrimaryKey')).status).toBe(204);
    expect((await withKey(primaryKey)).status).toBe(401);
    const renewed = (await manage('POST', '/subscriptions/s1/listSecrets')).json.primaryKey;
    expect((await withKey(renewed)).status).toBe(200);

    // A product with subscriptions is not deleted by accident.
    const refused = await manage('DELETE', '/products/gold');
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toContain('s1');
  });

  // Issue 13: a cross-site form POST to …/regeneratePrimaryKey succeeded (204); a policy path could lead outside the
  // configuration folder and the next policy write overwrote that file; a YAML alias bomb was 503, not 400.
  it('refuses forged and form-encoded writes, policy files outside the folder and a YAML alias bomb', async () => {
    expect((await manage('PUT', '/subscriptions/forged', { scope: { api: 'courses' } })).status).toBe(201);
    const key = async () =>
      (await manage('POST', '/subscriptions/forged/listSecrets')).json.primaryKey as string;
    const before = await key();
    const regenerate = '/subscriptions/forged/regeneratePrimaryKey';
    const form = await manage('POST', regenerate, '', 'application/x-www-form-urlencoded');
    expect(form.status).toBe(415);
    expect(form.json.error.code).toBe('UnsupportedMediaType');
    const foreign = await manage('POST', regenerate, undefined, 'application/json', {
      origin: 'https://evil.example',
    });
    expect(foreign.status).toBe(403);
    const crossSite = await manage('POST', regenerate, undefined, 'application/json', {
      'sec-fetch-site': 'cross-site',
    });
    expect(crossSite.status).toBe(403);
    expect(await key()).toBe(before);
    // The management API's own origin, as a browser on its page would send it, may write.
    expect(
      (await manage('POST', regenerate, undefined, 'application/json', { origin: management })).status,
    ).toBe(204);
    expect(await key()).not.toBe(before);

    const victim = path.join(path.dirname(directory), `${path.basename(directory)}-victim.xml`);
    await writeFile(victim, marking('victim'));
    const outside = await manage('PATCH', '/apis/courses/operations/list', {
      policy: `../${path.basename(victim)}`,
    });
    expect(outside.status).toBe(400);
    expect(outside.json.error.message).toBe('policy files must be inside the configuration folder');
    expect(readFileSync(victim, 'utf8')).toBe(marking('victim'));
    await rm(victim);

    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 9; level++) {
      const [previous, name] = [String.fromCharCode(96 + level), String.fromCharCode(97 + level)];
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    }
    const bomb = await manage('PUT', '/configuration', `${levels.join('\n')}\n`, 'application/yaml');
    expect(bomb.status).toBe(400);
    expect(bomb.json.error.code).toBe('ValidationError');
    expect((await call(`${gateway}/courses/api/Course`)).status).toBeLessThan(500);
  });

  it('refuses changes while the files on disk hold a change that does not run', async () => {
    const good = readFileSync(configFile, 'utf8');
    await writeFile(configFile, `${good}\nnot: [valid`);
    await until(() => saidBy(run.output(), 'up', 'configuration refused'), 'the refusal of the edit');
    const conflict = await manage('PUT', '/backends/another', { url: 'http://127.0.0.1:2' });
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe('Conflict');
    expect(readFileSync(configFile, 'utf8')).toContain('not: [valid');

    await writeFile(configFile, good);
    await until(
      async () => (await manage('PUT', '/users/ada', { email: 'ada@example.org' })).status === 201,
      'changes to be accepted again',
      15_000,
    );
  });

  it('exports the running configuration and imports it back unchanged (YAML and JSON)', async () => {
    const exported = await call(`${management}/configuration`);
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^application\/yaml/);
    // One document carries everything: the policy of courses.xml is inline.
    const document = parse(exported.text);
    expect(document.apis[0].policy).toBe(marking('{{mark}}'));
    expect(document.namedValues.mark).toEqual({ value: 'hidden-three', secret: true });

    const imported = await manage('PUT', '/configuration', exported.text, 'application/yaml');
    expect([202, 204]).toContain(imported.status);
    const again = await call(`${management}/configuration`);
    expect(again.text).toBe(exported.text);
    expect((await call(`${gateway}/courses/api/Course`, { auth: false })).status).toBe(401);

    const json = await call(`${management}/configuration`, { headers: { accept: 'application/json' } });
    expect(json.json).toEqual(document);
    // An import that changes something applies it: here the named value.
    const changed = { ...json.json, namedValues: { mark: 'four' } };
    expect([202, 204]).toContain((await manage('PUT', '/configuration', changed)).status);
    const key = (await manage('POST', '/subscriptions/s1/listSecrets')).json.primaryKey;
    const answer = await call(`${gateway}/courses/api/Course`, {
      auth: false,
      headers: { 'ocp-apim-subscription-key': key },
    });
    expect(answer.headers['x-mark']).toBe('four');
    expect(
      (await call(`${management}/configuration`, { headers: { accept: 'application/json' } })).json,
    ).toEqual(changed);

    // An invalid document is refused whole.
    const invalid = await manage('PUT', '/configuration', { ...changed, apis: [{ id: 'x' }] });
    expect(invalid.status).toBe(400);
    const problems = invalid.json.error.details.map((detail: { message: string }) => detail.message);
    expect(problems.join('\n')).toMatch(/gateway\.yaml:\d+:\d+: apis\[0\]\.urlSuffix: is required/);
  }, 90_000);

  it("refuses a change the running Envoy rejects with Envoy's reason (a gateway port another process holds); the running configuration stays", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as { port: number }).port;
    try {
      const document = (
        await call(`${management}/configuration`, { headers: { accept: 'application/json' } })
      ).json;
      const answered = (await call(`${gateway}/courses/api/Course`)).status;
      const before = run.output().length;
      const refused = await manage('PUT', '/configuration', {
        ...document,
        gateway: { ...document.gateway, http: { ...document.gateway.http, port: taken } },
      });
      expect(refused.status).toBe(400);
      expect(refused.json.error.message).toBe(
        'Envoy rejects this configuration; the running configuration stays',
      );
      const details = refused.json.error.details.map((detail: { message: string }) => detail.message);
      expect(details.join('\n')).toMatch(/Envoy rejected the listeners .*:\d+.*(bind|address)/i);
      expect(saidBy(run.output(), 'up', 'configuration refused, the running one stays', before)).toBe(true);
      // The gateway answers where it did, as it did.
      expect((await call(`${gateway}/courses/api/Course`)).status).toBe(answered);
      expect(
        (await call(`${management}/configuration`, { headers: { accept: 'application/json' } })).json,
      ).toEqual(document);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 60_000);

  it('reloads on SIGHUP even when no file changed (files beyond the policies are read again)', async () => {
    // up's own line comes once the whole reload is applied (the engines' come before it): a change sent before then
    // would be based on the generation the reload replaces, and refused (409).
    const reloads = () => countSaidBy(run.output(), 'up', 'configuration reloaded');
    const before = reloads();
    run.child.kill('SIGHUP');
    await until(() => reloads() > before, 'up to reload on SIGHUP');
    expect((await call(`${management}/apis`)).status).toBe(200);
  });

  it('deletes an API in the running Envoy: its URLs are gone when the answer comes', async () => {
    expect((await manage('DELETE', '/apis/second')).status).toBe(204);
    expect((await call(`${gateway}/second/api/Course/2`)).status).toBe(404);
    expect((await call(`${management}/apis/second`)).status).toBe(404);
  }, 60_000);
});
