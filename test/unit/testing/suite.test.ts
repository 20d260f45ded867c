import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { junitXml, passed, reportLines, runSuite } from '../../../src/testing/suite.js';
import { scratchFolder } from '../../fixtures/scratch.js';

/**
 * Cases run through the engine's own exchange over a real configuration (policies in files), with stubs; what the
 * expectations, the report, the coverage and the test file's own checks make of them.
 */
const { folder, write } = scratchFolder('policy-test');

beforeAll(() => {
  write(
    'gateway.yaml',
    `apis:
  - id: orders
    urlSuffix: orders
    serviceUrl: http://orders.internal:9000
    policy: orders.xml
    operations:
      - { id: get-order, method: GET, urlTemplate: "/orders/{id}" }
`,
  );
  write(
    'orders.xml',
    `<policies>
  <inbound>
    <base />
    <validate-jwt header-name="Authorization" failed-validation-httpcode="401">
      <issuer-signing-keys><key>c2lnbmluZy1zZWNyZXQtZm9yLXRlc3RzLTAxMjM0NTY3</key></issuer-signing-keys>
      <required-claims><claim name="role" match="any"><value>reader</value></claim></required-claims>
    </validate-jwt>
    <rate-limit-by-key calls="3" renewal-period="60" counter-key="@(context.Request.IpAddress)" />
    <choose>
      <when condition="@(context.Request.MatchedParameters[&quot;id&quot;] == &quot;0&quot;)">
        <send-request mode="new" response-variable-name="audit" timeout="5">
          <set-url>https://audit.internal/log</set-url>
          <set-method>POST</set-method>
        </send-request>
        <set-variable name="audited" value="@(((IResponse)context.Variables[&quot;audit&quot;]).StatusCode)" />
        <cache-store-value key="last-zero" value="seen" duration="60" />
      </when>
    </choose>
  </inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
  <on-error><base /><set-header name="x-error" exists-action="override"><value>@(context.LastError.Reason)</value></set-header></on-error>
</policies>
`,
  );
});

const common = `keys:
  test-key: { algorithm: HS256, secret: c2lnbmluZy1zZWNyZXQtZm9yLXRlc3RzLTAxMjM0NTY3 }
stubs:
  backend: { status: 200, body: { id: 7 } }
  time: 2026-01-01T00:00:00Z
`;

describe('policy test cases', () => {
  it('checks the response, the backend request, calls, variables, counters, cache and LastError', async () => {
    const file = write(
      'pass.policy-test.yaml',
      `${common}cases:
  - name: a reader gets the order, audited for id 0
    api: orders
    operation: get-order
    request:
      parameters: { id: "0" }
      clientAddress: 10.1.1.1
      jwt: { key: test-key, claims: { role: reader } }
    stubs:
      http: [{ url: https://audit.internal/log, method: POST, status: 204 }]
      counters: { "rate-limit-by-key:10.1.1.1": 1 }
    expect:
      status: 200
      body: { json: { id: 7 } }
      backend: { method: GET, url: http://orders.internal:9000/orders/0, headers: { authorization: { regex: "^Bearer ey" } } }
      calls: [{ method: POST, url: https://audit.internal/log }]
      variables: { audited: 204 }
      counters: { "rate-limit-by-key:10.1.1.1": 2 }
      cache: { last-zero: seen }
      lastError: null
      trace: ["validate-jwt  next", "choose  next  when[1]", "send-request"]
  - name: a token without the role is refused before the backend
    api: orders
    operation: get-order
    request: { parameters: { id: "5" }, jwt: { key: test-key, claims: { role: writer } } }
    expect:
      status: 401
      headers: { x-error: { regex: "Claim" } }
      backend: false
      lastError: { source: validate-jwt }
  - name: the fourth call in the window is refused
    request: { path: /orders/orders/5, method: GET, jwt: { key: test-key, claims: { role: reader } } }
    stubs: { counters: { "rate-limit-by-key:127.0.0.1": 3 } }
    expect: { status: 429, lastError: { reason: RateLimitExceeded } }
`,
    );
    const result = await runSuite([file]);
    const failures = result.cases
      .filter((item) => !passed(item))
      .map((item) => reportLines({ ...result, cases: [item] }));
    expect(failures).toEqual([]);
    expect(result.cases).toHaveLength(3);
    const coverage = [...result.coverage.values()][0]!;
    expect(coverage.branchRatio()).toEqual({ taken: 1, total: 2 });
    const text = coverage.text().join('\n');
    expect(text).toMatch(/orders\.xml: elements 8\/8, branches 1\/2, on-error 1\/1/);
    expect(text).toMatch(/4:5 +validate-jwt +next×2 refused×1\n/);
    expect(text).toMatch(/9:5 +choose +next×1; when\[1\]×1 none×0\n/);
    expect(coverage.lcov()).toContain('BRDA:9,0,0,1');
  });

  it('reports a failure with what differed, where the outcome was decided and the trace; JUnit says the same', async () => {
    const file = write(
      'fail.policy-test.yaml',
      `${common}cases:
  - name: expects the wrong status
    api: orders
    operation: get-order
    request: { parameters: { id: "5" } }
    expect: { status: 200, headers: { x-error: null } }
`,
    );
    const result = await runSuite([file]);
    const lines = reportLines(result);
    expect(lines[0]).toMatch(/^FAIL .*fail\.policy-test\.yaml › expects the wrong status/);
    expect(lines).toContain('     status: expected 200, got 401');
    expect(lines).toContain('     headers.x-error: expected absent, got "TokenNotPresent"');
    expect(lines.find((line) => line.includes('decided at'))).toMatch(/orders\.xml:4:5$/);
    expect(lines.at(-1)).toBe('0 passed, 1 failed');
    const xml = junitXml(result);
    expect(xml).toContain('failures="1"');
    expect(xml).toContain('<failure message="status: expected 200, got 401">');
  });

  it('places an unknown API, operation or key in the test file before running anything', async () => {
    const file = write(
      'unknown.policy-test.yaml',
      `cases:
  - name: nothing there
    api: shipments
  - name: no such operation
    api: orders
    operation: delete-order
  - name: no such key
    request: { path: /orders/orders/1, jwt: { key: missing } }
`,
    );
    const error = await runSuite([file]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message.split('\n')).toEqual([
      `${file}:3:5: cases[0].api: no API "shipments" in ${path.join(folder, 'gateway.yaml')} (it has: orders)`,
      `${file}:6:5: cases[1].operation: no operation "delete-order" in API "orders" (it has: get-order)`,
      `${file}:8:47: cases[2].request.jwt.key: no key "missing" in this file's keys (it has: none)`,
    ]);
  });
});
