import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { engineTransports } from '../../processes/ext-authz.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** check-header: a missing header or a value not in the list is refused with the configured status and message. */
describe.each(engineTransports)('check-header through Envoy (%s)', (transport) => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('chk', backend.url, [['get', 'GET', '/c', 'op.xml']])}\n`,
      {
        'op.xml': policy({
          inbound: `<check-header name="X-Client" failed-check-httpcode="401" failed-check-error-message="Unknown client" ignore-case="true">
      <value>alpha</value>
      <value>beta</value>
    </check-header>`,
          onError: `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>
    <set-header name="X-Message" exists-action="override"><value>@(context.LastError.Message)</value></set-header>`,
        }),
      },
      {},
      undefined,
      transport,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('lets an allowed value through (ignore-case)', async () => {
    const response = await fetch(`${gateway.url}/chk/c`, { headers: { 'X-Client': 'ALPHA' } });
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-client']).toBe('ALPHA');
  });

  it('refuses a missing header with HeaderNotFound', async () => {
    const before = backend.received.length;
    const response = await fetch(`${gateway.url}/chk/c`);
    expect(response.status).toBe(401);
    expect(response.headers.get('x-reason')).toBe('HeaderNotFound');
    // LastError.Message is API Management's text ("Error handling in API Management policies", predefined
    // errors); failed-check-error-message is the client's.
    expect(response.headers.get('x-message')).toBe(
      'Header X-Client was not found in the request. Access denied.',
    );
    expect(await response.json()).toEqual({ statusCode: 401, message: 'Unknown client' });
    expect(backend.received.length).toBe(before);
  });

  it('refuses a value not in the list with HeaderValueNotAllowed', async () => {
    const response = await fetch(`${gateway.url}/chk/c`, { headers: { 'X-Client': 'gamma' } });
    expect(response.status).toBe(401);
    expect(response.headers.get('x-reason')).toBe('HeaderValueNotAllowed');
    expect(response.headers.get('x-message')).toBe(
      'Header X-Client value of gamma is not allowed. Access denied.',
    );
    expect(await response.json()).toEqual({ statusCode: 401, message: 'Unknown client' });
  });
});
