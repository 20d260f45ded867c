import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';

const wsdl = fileURLToPath(new URL('../../fixtures/catalog/wsdl/calculator-1.1.wsdl', import.meta.url));

const envelope = (body: string) =>
  `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`;

/** A WSDL-defined SOAP pass-through API: operations told apart by SOAPAction, then by the body's first element. */
describe('a SOAP API imported from WSDL 1.1, through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(`
apis:
  - id: calculator
    urlSuffix: calc
    serviceUrl: ${backend.url}/calculator.asmx
    definition: { format: wsdl, file: ${wsdl} }
    policy: |
      <policies>
        <inbound><base /><set-header name="x-operation" exists-action="override"><value>@(context.Operation.Id)</value></set-header></inbound>
        <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
      </policies>
`);
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('matches the operation by its SOAPAction and forwards to the service URL without a trailing slash', async () => {
    const response = await fetch(`${gateway.url}/calc`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://tempuri.org/Add"' },
      body: envelope('<Add xmlns="http://tempuri.org/messages"><intA>1</intA><intB>2</intB></Add>'),
    });
    expect(response.status).toBe(200);
    const seen = backend.received.at(-1)!;
    expect(seen.url).toBe('/calculator.asmx');
    expect(seen.headers['x-operation']).toMatch(/add/i);
    expect(seen.body).toContain('<intA>1</intA>');
  });

  it('matches by the first element of the SOAP body when the action does not decide', async () => {
    const response = await fetch(`${gateway.url}/calc`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
      body: envelope('<Ping xmlns="http://tempuri.org/messages"/>'),
    });
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-operation']).toMatch(/ping/i);
  });

  it('answers 404 for a body that names no operation, without reaching the backend', async () => {
    const before = backend.received.length;
    const response = await fetch(`${gateway.url}/calc`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
      body: envelope('<Divide xmlns="http://tempuri.org/messages"/>'),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ statusCode: 404, message: 'Resource not found' });
    expect(backend.received.length).toBe(before);
  });
});
