import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchFolder } from '../../../fixtures/scratch.js';
import { answer, type ExchangeUnderTest, exchangeUnderTest, gatewayOf, play } from './harness.js';

const wsdl = fileURLToPath(new URL('../../../fixtures/catalog/wsdl/calculator-1.1.wsdl', import.meta.url));
const envelope = (body: string) =>
  `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`;
const { write } = scratchFolder('exchange-soap');

/**
 * A WSDL-defined SOAP pass-through API: the operation by SOAPAction, else by the body's first element (the exchange
 * asks for the body first), else 404. As test/integration/catalog/soap.test.ts through Envoy.
 */
describe('SOAP operations matched on the body, in-process', () => {
  let exchange: ExchangeUnderTest;

  beforeAll(async () => {
    const gateway = await gatewayOf(write, {
      'gateway.yaml': `apis:
  - id: calculator
    urlSuffix: calc
    serviceUrl: http://backend.test:9000/calculator.asmx
    definition: { format: wsdl, file: ${wsdl} }
    policy: |
      <policies>
        <inbound><base /><set-header name="x-operation" exists-action="override"><value>@(context.Operation.Id)</value></set-header></inbound>
        <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
      </policies>
`,
    });
    exchange = await exchangeUnderTest(gateway, () => answer(200, '<ok/>', { 'content-type': 'text/xml' }));
  });

  afterAll(async () => {
    await exchange?.close();
  });

  const post = (action: string, body: string) =>
    play(exchange, {
      method: 'POST',
      path: '/calc',
      headers: [
        ['content-type', 'text/xml; charset=utf-8'],
        ['soapaction', action],
      ],
      body: Buffer.from(envelope(body)),
    });
  const header = (headers: readonly (readonly [string, string])[] | undefined, name: string) =>
    headers?.find(([key]) => key === name)?.[1];

  it('matches the operation by its SOAPAction and forwards to the service URL without a trailing slash', async () => {
    const played = await post(
      '"http://tempuri.org/Add"',
      '<Add xmlns="http://tempuri.org/messages"><intA>1</intA><intB>2</intB></Add>',
    );
    expect(played.response.status).toBe(200);
    expect(played.backend?.url).toBe('http://backend.test:9000/calculator.asmx');
    expect(header(played.backend?.headers, 'x-operation')).toMatch(/add/i);
    expect(played.backend?.body).toContain('<intA>1</intA>');
  });

  it('matches by the first element of the SOAP body when the action does not decide', async () => {
    const played = await post('""', '<Ping xmlns="http://tempuri.org/messages"/>');
    expect(played.response.status).toBe(200);
    expect(header(played.backend?.headers, 'x-operation')).toMatch(/ping/i);
  });

  it('answers 404 for a body that names no operation, without reaching the backend', async () => {
    const played = await post('""', '<Divide xmlns="http://tempuri.org/messages"/>');
    expect(played.response.status).toBe(404);
    expect(JSON.parse(played.response.body.toString())).toEqual({
      statusCode: 404,
      message: 'Resource not found',
    });
    expect(played.backend).toBeUndefined();
  });
});
