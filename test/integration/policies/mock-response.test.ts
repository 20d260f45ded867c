import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../helpers/backend.js';
import { type GatewayStack, startGateway } from '../../helpers/gateway.js';
import { apiYaml, policy } from './support.js';

/** mock-response answers with its status and content type; the backend is not called. */
describe('mock-response through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('mock', backend.url, [
        ['created', 'POST', '/things', 'created.xml'],
        ['default', 'GET', '/things', 'default.xml'],
      ])}\n`,
      {
        'created.xml': policy({
          inbound: '<mock-response status-code="201" content-type="application/json" />',
        }),
        'default.xml': policy({ inbound: '<mock-response />' }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  // Envoy drops Content-Type from a local reply without a body, so the mocked content type is not asserted.
  it('answers with the configured status without calling the backend', async () => {
    const response = await fetch(`${gateway.url}/mock/things`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('');
    expect(backend.received).toHaveLength(0);
  });

  it('defaults to 200', async () => {
    const response = await fetch(`${gateway.url}/mock/things`);
    expect(response.status).toBe(200);
    expect(backend.received).toHaveLength(0);
  });
});
