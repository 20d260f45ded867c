import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** xml-to-json on the backend's XML response (response body phase). */
describe('xml-to-json through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) =>
      request.url === '/json'
        ? { body: '{"already":"json"}' }
        : {
            headers: { 'content-type': 'application/xml' },
            body: '<root a="1"><item>x</item><item>y</item><one>z</one></root>',
          },
    );
    gateway = await startGateway(
      `apis:\n${apiYaml('xj', backend.url, [
        ['friendly', 'GET', '/friendly', 'friendly.xml'],
        ['direct', 'GET', '/direct', 'direct.xml'],
        ['json', 'GET', '/json', 'friendly.xml'],
      ])}\n`,
      {
        'friendly.xml': policy({
          outbound:
            '<xml-to-json kind="javascript-friendly" apply="content-type-xml" consider-accept-header="false" />',
        }),
        'direct.xml': policy({
          outbound: '<xml-to-json kind="direct" apply="always" consider-accept-header="false" />',
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('javascript-friendly: attributes as properties, repeated elements as arrays', async () => {
    const response = await fetch(`${gateway.url}/xj/friendly`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ root: { a: '1', item: ['x', 'y'], one: 'z' } });
  });

  it('direct keeps the attribute marker', async () => {
    const response = await fetch(`${gateway.url}/xj/direct`);
    expect(await response.json()).toEqual({ root: { '@a': '1', item: ['x', 'y'], one: 'z' } });
  });

  it('content-type-xml leaves a JSON response alone', async () => {
    const response = await fetch(`${gateway.url}/xj/json`);
    expect(await response.json()).toEqual({ already: 'json' });
  });
});
