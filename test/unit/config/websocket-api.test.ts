import { describe, expect, it } from 'vitest';
import { inMemoryGateway } from './harness.js';

/**
 * WebSocket APIs at load (https://learn.microsoft.com/azure/api-management/websocket-api): one operation,
 * onHandshake; the policies API Management lists as unsupported on it ("Unsupported policies") are refused at the
 * API and operation scopes, and skipped when inherited from the global or a product scope.
 */
const DIR = '/tmp/portcullis-websocket';
const load = inMemoryGateway(DIR);

const sections = (inbound: string) =>
  `<policies>\n  <inbound>\n    <base />\n    ${inbound}\n  </inbound>\n  <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>\n</policies>\n`;

const websocketApi = (extra = '') => `apis:
  - id: chat
    type: websocket
    urlSuffix: chat
    serviceUrl: http://127.0.0.1:1/socket
${extra}`;

describe('a WebSocket API at load', () => {
  it('has the onHandshake operation, GET /, when it lists none', async () => {
    const gateway = await load(websocketApi());
    const api = gateway.catalog.apis.find((candidate) => candidate.id === 'chat')!;
    expect(api.type).toBe('websocket');
    expect(api.operations.map((operation) => [operation.id, operation.method])).toEqual([
      ['onHandshake', 'GET'],
    ]);
  });

  it('refuses an unsupported element at the API scope, where it is written (file:line:col)', async () => {
    const error = await load(websocketApi('    policy: chat.xml\n'), {
      'chat.xml': sections('<set-body>hi</set-body>'),
    }).catch((caught: Error) => caught);
    expect(String(error)).toContain(
      `${DIR}/chat.xml:4:5: <set-body> (Set body) is not supported on the onHandshake operation of WebSocket API "chat"`,
    );
  });

  it('refuses one nested in a choose at the operation scope', async () => {
    const operation = `    operations:
      - id: onHandshake
        method: GET
        urlTemplate: /
        policy: handshake.xml
`;
    const error = await load(websocketApi(operation), {
      'handshake.xml': sections(
        '<choose><when condition="@(true)"><cors><allowed-origins><origin>*</origin></allowed-origins></cors></when></choose>',
      ),
    }).catch((caught: Error) => caught);
    expect(String(error)).toMatch(
      /handshake\.xml:4:\d+: <cors> \(CORS\) is not supported on the onHandshake/,
    );
  });

  it('accepts the access-control elements API Management allows on the handshake', async () => {
    await load(
      websocketApi(
        `    policy: |\n${sections(
          '<ip-filter action="allow"><address>127.0.0.1</address></ip-filter><rate-limit-by-key calls="5" renewal-period="60" counter-key="@(context.Request.IpAddress)" /><check-header name="x-a" failed-check-httpcode="401" failed-check-error-message="no" ignore-case="true" />',
        )
          .split('\n')
          .map((line) => `      ${line}`)
          .join('\n')}`,
      ),
    );
  });

  it('skips an unsupported element it inherits from the global scope, nested ones too; an HTTP API keeps them', async () => {
    const gateway = await load(
      `policy: global.xml
${websocketApi()}  - id: rest
    urlSuffix: rest
    serviceUrl: http://127.0.0.1:1
    operations: [{ id: get, method: GET, urlTemplate: / }]
`,
      {
        'global.xml': sections(
          '<cors><allowed-origins><origin>*</origin></allowed-origins></cors><choose><when condition="@(true)"><set-body>x</set-body><set-header name="x-kept" exists-action="override"><value>1</value></set-header></when></choose>',
        ),
      },
    );
    const inbound = (id: string) =>
      gateway.catalog.apis
        .find((api) => api.id === id)!
        .operations[0]!.pipeline.uses.inbound.map((use) => use.element);
    expect(inbound('chat')).toEqual(['choose', 'set-header']);
    expect(inbound('rest')).toEqual(['cors', 'choose', 'set-body', 'set-header']);
  });

  it('needs no body, whatever a policy reads: after the 101 the bytes are the upgraded connection', async () => {
    const reading = sections(
      '<set-variable name="text" value="@(context.Request.Body.As<string>(preserveContent: true))" />',
    ).replace(
      '<outbound><base /></outbound>',
      '<outbound><base /><set-variable name="answer" value="@(context.Response.Body.As<string>(preserveContent: true))" /></outbound>',
    );
    const gateway = await load(
      `policy: reading.xml
${websocketApi()}  - id: rest
    urlSuffix: rest
    serviceUrl: http://127.0.0.1:1
    operations: [{ id: post, method: POST, urlTemplate: / }]
`,
      { 'reading.xml': reading },
    );
    const needs = (id: string) =>
      gateway.catalog.apis.find((api) => api.id === id)!.operations[0]!.pipeline.needs;
    expect(needs('rest')).toMatchObject({ requestBody: true, responseBody: true });
    expect(needs('chat')).toMatchObject({ requestBody: false, responseBody: false, responseHeaders: true });
  });

  it('refuses an operation other than onHandshake, and a second one', async () => {
    const error = await load(
      websocketApi(`    operations:
      - { id: onHandshake, method: GET, urlTemplate: / }
      - { id: send, method: POST, urlTemplate: /send }
`),
    ).catch((caught: Error) => caught);
    expect(String(error)).toMatch(
      /gateway\.yaml:\d+:\d+: apis\[0\]\.operations: a WebSocket API has one operation/,
    );
    expect(String(error)).toMatch(
      /apis\[0\]\.operations\[1\]: a WebSocket API's operation is "id: onHandshake, method: GET, urlTemplate: \/"; got send POST \/send/,
    );
  });
});
