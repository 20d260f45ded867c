import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../helpers/backend.js';
import { type GatewayStack, startGateway } from '../../helpers/gateway.js';
import { apiYaml, policy } from './support.js';

/** set-status in outbound changes the status the client sees and keeps the backend's body. */
describe('set-status through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) =>
      request.url === '/missing' ? { status: 404, body: 'nothing here' } : { body: 'found' },
    );
    gateway = await startGateway(
      `apis:\n${apiYaml('st', backend.url, [
        ['created', 'GET', '/created', 'created.xml'],
        ['missing', 'GET', '/missing', 'missing.xml'],
      ])}\n`,
      {
        'created.xml': policy({ outbound: '<set-status code="201" reason="Created" />' }),
        'missing.xml': policy({
          outbound: `<choose><when condition="@(context.Response.StatusCode == 404)">
            <set-status code="@(410)" reason="Gone" /></when></choose>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('replaces the status and keeps the body', async () => {
    const response = await fetch(`${gateway.url}/st/created`);
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('found');
  });

  it('takes the code from an expression, depending on the backend status', async () => {
    const response = await fetch(`${gateway.url}/st/missing`);
    expect(response.status).toBe(410);
    expect(await response.text()).toBe('nothing here');
  });
});
