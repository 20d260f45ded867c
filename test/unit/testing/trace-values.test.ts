import { beforeAll, describe, expect, it } from 'vitest';
import { SHOWN_VALUE_CHARS, shownValue } from '../../../src/engine/trace-steps.js';
import { passed, reportLines, runSuite } from '../../../src/testing/suite.js';
import { scratchFolder } from '../../fixtures/scratch.js';

/**
 * The values of the policy expressions each statement evaluated, in the trace `portcullis test` and `run` print
 * (the live debug trace's steps are the same records): cut to a safe length, credentials removed.
 */
const { write } = scratchFolder('trace-values');

const partnerKey = 'partner-key-0123456789abcdef';
const identityToken = 'opaque-identity-token-5f0c2b7e';

beforeAll(() => {
  write(
    'gateway.yaml',
    `identities:
  sources:
    vm: { type: azure-imds, endpoint: "http://127.0.0.1:9/never-called" }
namedValues:
  partner-key: { value: ${partnerKey}, secret: true }
apis:
  - id: shop
    urlSuffix: shop
    serviceUrl: http://shop.internal
    policy: shop.xml
    operations:
      - { id: item, method: GET, urlTemplate: "/items/{id}" }
      - { id: create, method: POST, urlTemplate: "/items/{id}" }
`,
  );
  write(
    'shop.xml',
    `<policies>
  <inbound>
    <base />
    <set-variable name="id" value="@(context.Request.MatchedParameters[&quot;id&quot;])" />
    <authentication-managed-identity resource="https://shop.example" output-token-variable-name="token" />
    <set-header name="x-item" exists-action="override"><value>@("item-" + (string)context.Variables["id"])</value><value>literal</value></set-header>
    <set-header name="x-api-key" exists-action="override"><value>@("plain-" + (string)context.Variables["id"])</value></set-header>
    <set-header name="x-forwarded-token" exists-action="override"><value>@((string)context.Variables["token"])</value></set-header>
    <set-header name="x-partner" exists-action="override"><value>@("key {{partner-key}}")</value></set-header>
    <rewrite-uri template="@(&quot;/v2/items/&quot; + (string)context.Variables[&quot;id&quot;])" />
    <choose>
      <when condition="@(context.Request.Method == &quot;POST&quot;)">
        <return-response>
          <set-status code="201" reason="Created" />
          <set-body>@(new string('x', 1000))</set-body>
        </return-response>
      </when>
    </choose>
  </inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
  <on-error><base /></on-error>
</policies>
`,
  );
});

describe('expression values in the trace', () => {
  it('shows what each expression computed, where it was written, without credentials, cut to a safe length', async () => {
    const file = write(
      'values.policy-test.yaml',
      `stubs:
  backend: { status: 200 }
  tokens: { default: { "*": ${identityToken} } }
cases:
  - name: a GET goes on with its computed headers and path
    api: shop
    operation: item
    request: { parameters: { id: "7" } }
    expect:
      backend: { url: http://shop.internal/v2/items/7, headers: { x-item: "item-7,literal", x-partner: "key ${partnerKey}" } }
      trace:
        - 'set-variable  next  id="7"  @value="7"'
        - 'authentication-managed-identity  next  token="***"  '
        - 'set-header  next  x-item="item-7"  '
        - 'set-header  next  x-api-key=***  '
        - 'set-header  next  x-forwarded-token="***"  '
        - 'set-header  next  x-partner="key ***"  '
        - 'rewrite-uri  next  @template="/v2/items/7"  '
  - name: a POST is answered with a long body
    api: shop
    operation: create
    request: { parameters: { id: "9" } }
    expect:
      status: 201
      trace:
        - { regex: 'set-body  next  set-body="x{${SHOWN_VALUE_CHARS - 1}}… \\(1000 chars\\)  ' }
`,
    );
    const result = await runSuite([file]);
    const failures = result.cases
      .filter((item) => !passed(item))
      .map((item) => reportLines({ ...result, cases: [item] }));
    expect(failures).toEqual([]);
    const trace = result.cases.flatMap((item) => item.outcome!.trace).join('\n');
    // Neither the secret named value, nor the identity's token, nor the key header's value is in any line.
    expect(trace).not.toContain(partnerKey);
    expect(trace).not.toContain(identityToken);
    expect(trace).not.toContain('plain-7');
    // A condition is shown as the branch it chose, not again as a value; a literal is not repeated.
    expect(trace).toMatch(/choose {2}next {2}none \(conditions: false\) {2}[\d.]+ ms/);
    expect(trace).not.toContain('literal');
    const [item] = result.cases;
    const rewrite = item!.outcome!.steps.find((step) => step.element === 'rewrite-uri');
    expect(rewrite?.values).toEqual({ '@template': '"/v2/items/7"' });
  });

  it('cuts a value to a safe length, working on its head only, and removes credentials first', () => {
    const long = `Bearer ${'a'.repeat(5000)}`;
    const shown = shownValue(long);
    expect(shown).toBe(`"Bearer ***"… (5007 chars)`);
    const body = 'b'.repeat(100_000);
    expect(shownValue(body)).toBe(`"${'b'.repeat(SHOWN_VALUE_CHARS - 1)}… (100000 chars)`);
    expect(shownValue('token=abc; other', (text) => text.replace('other', '***'))).toBe('"token=***; ***"');
    expect(shownValue(42)).toBe('42');
  });
});
