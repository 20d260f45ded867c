import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCli } from '../../processes/cli.js';

const example = fileURLToPath(new URL('../../../examples/courses/', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'portcullis-test-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('portcullis test and run', () => {
  it('runs the example gateway tests: one PASS line per case, exit 0', async () => {
    const outcome = await runCli(['test'], { cwd: example });
    expect(outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
    const cases = (
      parse(readFileSync(path.join(example, 'courses.policy-test.yaml'), 'utf8')) as {
        cases: { name: string }[];
      }
    ).cases;
    const lines = outcome.stdout.trim().split('\n');
    expect(lines.slice(0, -1).map((line) => line.replace(/ \([\d.]+ ms\)$/, ''))).toEqual(
      cases.map((testCase) => `PASS courses.policy-test.yaml › ${testCase.name}`),
    );
    expect(lines.at(-1)).toBe(`${cases.length} passed, 0 failed`);
  });

  it('exits 1 on a failing case, writes JUnit, and prints coverage with line numbers', async () => {
    const file = path.join(scratch, 'wrong.policy-test.yaml');
    writeFileSync(
      file,
      `cases:\n  - { name: wrong status, api: guarded, operation: guarded-list, stubs: { backend: { status: 200 } }, expect: { status: 200 } }\n`,
    );
    const junit = path.join(scratch, 'junit.xml');
    const outcome = await runCli(
      ['test', '--config', path.join(example, 'gateway.yaml'), '--junit', junit, '--coverage', file],
      { cwd: scratch },
    );
    expect(outcome.status).toBe(1);
    expect(outcome.stdout).toContain('FAIL wrong.policy-test.yaml › wrong status');
    expect(outcome.stdout).toContain('status: expected 200, got 401');
    expect(outcome.stdout).toMatch(/decided at .*guarded-api\.xml:14:17/);
    expect(outcome.stdout).toMatch(/guarded-api\.xml: elements 5\/5, branches 1\/2, on-error 0\/0/);
    expect(readFileSync(junit, 'utf8')).toContain(
      '<testcase classname="wrong.policy-test.yaml" name="wrong status"',
    );
  });

  it('reports a broken test file as file:line:col: key: message, exit 1', async () => {
    const file = path.join(scratch, 'broken.policy-test.yaml');
    writeFileSync(file, `cases:\n  - name: x\n    api: courses\n    expect: { stauts: 200 }\n`);
    const outcome = await runCli(['test', '--config', path.join(example, 'gateway.yaml'), file]);
    expect(outcome.status).toBe(1);
    expect(outcome.stderr.trim()).toBe(`${file}:4:15: cases[0].expect.stauts: unknown key "stauts"`);
  });

  it('runs one request with stubs and prints the response and the trace', async () => {
    const stubs = path.join(scratch, 'stubs.yaml');
    writeFileSync(stubs, 'backend: { status: 200, body: [{ id: 2 }] }\n');
    const outcome = await runCli(['run', 'GET', '/courses/api/Course?courseID=2', '--stubs', stubs], {
      cwd: example,
    });
    expect(outcome.status).toBe(0);
    const lines = outcome.stdout.split('\n');
    expect(lines[0]).toBe('HTTP 200');
    expect(outcome.stdout).toContain('[{"id":2}]');
    expect(outcome.stdout).toContain('backend received: GET http://127.0.0.1:8081/api/Course/2');
    expect(outcome.stdout).toMatch(
      /inbound set-variable {2}next {2}courseID="2" .* @ policies\/courses-api\.xml:9:9/,
    );
    expect(outcome.stdout).toMatch(/inbound choose {2}next {2}when\[1\] \(conditions: true\)/);
  });

  it('shows in the trace the values the policy expressions computed', async () => {
    const outcome = await runCli(['run', 'GET', '/courses/api/Course?courseID=12'], { cwd: example });
    expect(outcome.status).toBe(0);
    // rewrite-uri's template="@("/api/Course/" + …)": the path it made, not the expression.
    expect(outcome.stdout).toMatch(
      /inbound rewrite-uri {2}next {2}@template="\/api\/Course\/12" .* @ policies\/courses-api\.xml:12:17/,
    );
    expect(outcome.stdout).toMatch(/inbound set-variable {2}next {2}courseID="12" {2}@value="12" /);
  });

  it('--init writes a starter test per API that runs as written', async () => {
    const folder = mkdtempSync(path.join(scratch, 'init-'));
    writeFileSync(
      path.join(folder, 'gateway.yaml'),
      `apis:\n  - id: shop\n    urlSuffix: shop\n    serviceUrl: http://127.0.0.1:9\n    operations:\n      - { id: item, method: GET, urlTemplate: "/items/{id}" }\n      - { id: add, method: POST, urlTemplate: /items }\n`,
    );
    const init = await runCli(['test', '--init'], { cwd: folder });
    expect(init.status).toBe(0);
    expect(init.stdout).toContain(`wrote ${path.join(folder, 'shop.policy-test.yaml')}`);
    const run = await runCli(['test'], { cwd: folder });
    expect(run.stdout).toContain('PASS shop.policy-test.yaml › item answers 200');
    expect(run.stdout).toContain('2 passed, 0 failed');
    expect(run.status).toBe(0);
  });

  // Issue #34, item 5: `--init` then `test` must pass as written — on the example, and on an imported definition
  // whose APIs need a subscription key.
  it('--init on a copy of the example: every starter passes, the guarded API’s answer (401) is what it expects', async () => {
    const folder = path.join(mkdtempSync(path.join(scratch, 'init-example-')), 'my-gateway');
    cpSync(example, folder, { recursive: true });
    rmSync(path.join(folder, 'courses.policy-test.yaml'));
    const init = await runCli(['test', '--init'], { cwd: folder });
    expect(init.stdout).toBe(
      `wrote ${path.join(folder, 'courses.policy-test.yaml')}\nwrote ${path.join(folder, 'guarded.policy-test.yaml')}\n`,
    );
    const guarded = parse(readFileSync(path.join(folder, 'guarded.policy-test.yaml'), 'utf8'));
    expect(guarded.cases).toEqual([
      expect.objectContaining({
        name: 'guarded-list answers 401',
        expect: { status: 401 },
      }),
    ]);
    const run = await runCli(['test'], { cwd: folder });
    expect(run.stdout).toContain('PASS courses.policy-test.yaml › create-course answers 200');
    expect(run.stdout).toContain('PASS guarded.policy-test.yaml › guarded-list answers 401');
    expect(run.stdout).toContain('4 passed, 0 failed');
    expect(run.status).toBe(0);
  });

  it('--init on imported definitions sends the configured subscription key, and writes nothing for an API without operations', async () => {
    const folder = mkdtempSync(path.join(scratch, 'init-imported-'));
    const fixtures = fileURLToPath(new URL('../../fixtures/catalog/', import.meta.url));
    const imports = [
      ['openapi', path.join(fixtures, 'openapi', 'petstore-2.0.json'), 'pets'],
      ['wsdl', path.join(fixtures, 'wsdl', 'calculator-1.1.wsdl'), 'calc'],
    ];
    for (const [kind, file, suffix] of imports) {
      const imported = await runCli(
        [
          'import',
          kind!,
          file!,
          '--suffix',
          suffix!,
          '--config',
          'gateway.yaml',
          '--service-url',
          'http://127.0.0.1:9',
        ],
        { cwd: folder },
      );
      expect(imported.status, imported.stderr).toBe(0);
    }
    // As API Management imports them: a call needs a subscription key.
    const configFile = path.join(folder, 'gateway.yaml');
    writeFileSync(
      configFile,
      readFileSync(configFile, 'utf8').replace(
        /^( +)urlSuffix: (.*)$/gm,
        '$1urlSuffix: $2\n$1subscriptionRequired: true',
      ),
    );
    appendFileSync(
      configFile,
      `  - { id: bare, urlSuffix: bare, serviceUrl: "http://127.0.0.1:9" }
products:
  - { id: starter, apis: [swagger-petstore, calculator, bare] }
subscriptions:
  - { id: starter-1, scope: { product: starter }, primaryKey: starter-primary-key-0001 }
`,
    );
    // Without the key every call is refused: the starters must send it.
    const refused = await runCli(['run', 'GET', '/pets/pet/1', '--config', 'gateway.yaml'], { cwd: folder });
    expect(refused.stdout.split('\n')[0]).toBe('HTTP 401');

    const init = await runCli(['test', '--init'], { cwd: folder });
    expect(init.status).toBe(0);
    expect(init.stdout).toContain(`wrote ${path.join(folder, 'swagger-petstore.policy-test.yaml')}`);
    expect(init.stdout).toContain(`wrote ${path.join(folder, 'calculator.policy-test.yaml')}`);
    expect(init.stdout).toContain('no starter for API "bare": it has no operations');
    expect(existsSync(path.join(folder, 'bare.policy-test.yaml'))).toBe(false);
    const calculator = parse(readFileSync(path.join(folder, 'calculator.policy-test.yaml'), 'utf8'));
    expect(calculator.cases[0].request).toMatchObject({
      headers: { SOAPAction: '"http://tempuri.org/Add"' },
      subscriptionKey: 'starter-primary-key-0001',
    });

    const run = await runCli(['test'], { cwd: folder });
    expect(run.stdout).toContain('PASS swagger-petstore.policy-test.yaml › getPetById answers 200');
    expect(run.stdout).toContain('PASS calculator.policy-test.yaml › Add answers 200');
    expect(run.stdout).toContain('6 passed, 0 failed');
    expect(run.status).toBe(0);
  });

  it("--init stubs the gateway's own credentials the policies ask for, so the starter passes", async () => {
    const folder = mkdtempSync(path.join(scratch, 'init-credentials-'));
    writeFileSync(
      path.join(folder, 'gateway.yaml'),
      `identities:
  default: vm
  sources:
    vm: { type: azure-imds, endpoint: "http://127.0.0.1:9/never-called" }
    partner: { type: client-credentials, tokenUrl: "http://127.0.0.1:9/token", clientId: partner-app, clientSecret: x }
  credentialProviders:
    github:
      source: { type: client-credentials, tokenUrl: "http://127.0.0.1:9/gh", clientId: gh, clientSecret: x }
      connections: { repo: { resource: "https://api.github.example" } }
apis:
  - id: storage
    urlSuffix: storage
    serviceUrl: http://127.0.0.1:9
    policy: storage.xml
    operations: [{ id: read, method: GET, urlTemplate: "/blobs/{name}" }]
`,
    );
    writeFileSync(
      path.join(folder, 'storage.xml'),
      `<policies>
  <inbound>
    <base />
    <authentication-managed-identity resource="https://storage.azure.com/" />
    <authentication-managed-identity resource="https://partner.example" client-id="partner-app" output-token-variable-name="partner" />
    <get-authorization-context provider-id="github" authorization-id="repo" context-variable-name="gh" />
  </inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
</policies>
`,
    );
    expect((await runCli(['test', '--init'], { cwd: folder })).status).toBe(0);
    const starter = parse(readFileSync(path.join(folder, 'storage.policy-test.yaml'), 'utf8')) as {
      stubs: unknown;
    };
    expect(starter.stubs).toEqual({
      tokens: { default: { '*': 'starter-token' }, 'partner-app': { '*': 'starter-token' } },
      authorizations: { github: { '*': 'starter-token' } },
    });
    const run = await runCli(['test'], { cwd: folder });
    expect(run.stdout).toContain('PASS storage.policy-test.yaml › read answers 200');
    expect(run.status).toBe(0);
  });
});
