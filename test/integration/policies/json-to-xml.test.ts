import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../helpers/backend.js';
import { type GatewayStack, startGateway } from '../../helpers/gateway.js';
import { apiYaml, policy } from './support.js';

/** json-to-xml on the backend's JSON response (response body phase) and on a JSON request body. */
describe('json-to-xml through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) =>
      request.method === 'GET' ? { body: JSON.stringify({ course: { id: 7, title: 'Envoy' } }) } : undefined,
    );
    gateway = await startGateway(
      `apis:\n${apiYaml('jx', backend.url, [
        ['get', 'GET', '/course', 'out.xml'],
        ['post', 'POST', '/course', 'in.xml'],
      ])}\n`,
      {
        'out.xml': policy({
          outbound: '<json-to-xml apply="content-type-json" consider-accept-header="false" />',
        }),
        'in.xml': policy({ inbound: '<json-to-xml apply="always" consider-accept-header="false" />' }),
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
    expect(await response.text()).toBe(
      '<Document><course><id>7</id><title>Envoy</title></course></Document>',
    );
  });

  it('turns the JSON request body into XML for the backend', async () => {
    await fetch(`${gateway.url}/jx/course`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 1 }),
    });
    const received = backend.received.at(-1)!;
    expect(received.body).toBe('<Document><a>1</a></Document>');
    expect(received.headers['content-type']).toBe('application/xml');
  });
});
