import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * The SOAP example of https://learn.microsoft.com/azure/api-management/json-to-xml-policy (MicrosoftDocs/azure-docs
 * articles/api-management/json-to-xml-policy.md). The page's output drops `<v1:QueryItem>` around `<name>`; that is a
 * slip of the page (nothing in the policy removes an element), so the element is kept here.
 */
const SOAP_JSON = {
  'soapenv:Envelope': {
    'xmlns:soapenv': 'http://schemas.xmlsoap.org/soap/envelope/',
    'xmlns:v1': 'http://localdomain.com/core/v1',
    'soapenv:Header': {},
    'soapenv:Body': {
      'v1:QueryList': {
        '#attrs': { queryName: 'test' },
        'v1:QueryItem': { name: 'dummy text' },
      },
    },
  },
};
const SOAP_XML =
  '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:v1="http://localdomain.com/core/v1">' +
  '<soapenv:Header />' +
  '<soapenv:Body><v1:QueryList queryName="test"><v1:QueryItem><name>dummy text</name></v1:QueryItem></v1:QueryList></soapenv:Body>' +
  '</soapenv:Envelope>';

/** json-to-xml on the backend's JSON response (response body phase) and on a JSON request body. */
describe('json-to-xml through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) => {
      if (request.method !== 'GET') return undefined;
      if (request.url.endsWith('/soap')) return { body: JSON.stringify(SOAP_JSON) };
      return { body: JSON.stringify({ course: { id: 7, title: 'Envoy' } }) };
    });
    gateway = await startGateway(
      `apis:\n${apiYaml('jx', backend.url, [
        ['get', 'GET', '/course', 'out.xml'],
        ['post', 'POST', '/course', 'in.xml'],
        ['soap', 'GET', '/soap', 'soap.xml'],
      ])}\n`,
      {
        'out.xml': policy({
          outbound: '<json-to-xml apply="content-type-json" consider-accept-header="false" />',
        }),
        'in.xml': policy({ inbound: '<json-to-xml apply="always" consider-accept-header="false" />' }),
        'soap.xml': policy({
          outbound:
            '<json-to-xml apply="always" consider-accept-header="false" parse-date="false" namespace-separator=":" namespace-prefix="xmlns" attribute-block-name="#attrs" />',
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('turns the JSON response into XML', async () => {
    const response = await fetch(`${gateway.url}/jx/course`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/xml');
    // One property: it is the root element, as in the docs' example (no <Document> around it).
    expect(await response.text()).toBe('<course><id>7</id><title>Envoy</title></course>');
  });

  it('turns the JSON request body into XML for the backend', async () => {
    await fetch(`${gateway.url}/jx/course`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 1, b: [true, null] }),
    });
    const received = backend.received.at(-1)!;
    expect(received.body).toBe(
      '<Document><a>1</a><b>True</b><b xsi:nil="true" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" /></Document>',
    );
    expect(received.headers['content-type']).toBe('application/xml');
  });

  it("gives the docs' SOAP example: prefixed names, xmlns properties as declarations, no extra root", async () => {
    const response = await fetch(`${gateway.url}/jx/soap`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(SOAP_XML);
  });
});
