import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml } from '../../processes/gateway-files.js';

/**
 * `<base />` stitching across the global (`policy:`), product (`products[].policy`), API (`apis[].policy`) and
 * operation (`operations[].policy`) scopes: each scope appends its name where it stands relative to base.
 */
describe('base stitching across scopes through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  const trail = (name: string, before: boolean) => {
    const add = `<set-header name="X-Trail" exists-action="append"><value>${name}</value></set-header>`;
    const out = `<set-header name="X-Out-Trail" exists-action="append"><value>${name}</value></set-header>`;
    return `<policies>
  <inbound>${before ? `${add}<base />` : `<base />${add}`}</inbound>
  <backend><base /></backend>
  <outbound><base />${out}</outbound>
  <on-error><base /></on-error>
</policies>`;
  };

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `policy: global.xml
products:
  - { id: starter, apis: [scoped], subscriptionRequired: false, policy: product.xml }
apis:
${apiYaml(
  'scoped',
  backend.url,
  [
    ['stitched', 'GET', '/s', 'operation.xml'],
    ['inherit', 'GET', '/i'],
    ['alone', 'GET', '/a', 'alone.xml'],
  ],
  { policy: 'api.xml' },
)}
${apiYaml('bare', backend.url, [['get', 'GET', '/b']])}
`,
      {
        'global.xml': `<policies>
  <inbound><set-header name="X-Trail" exists-action="append"><value>global</value></set-header></inbound>
  <backend><forward-request /></backend>
  <outbound><set-header name="X-Out-Trail" exists-action="append"><value>global</value></set-header></outbound>
  <on-error />
</policies>`,
        'product.xml': trail('product', false),
        'api.xml': trail('api', false),
        // The operation puts its own statement before base: it runs first.
        'operation.xml': trail('operation', true),
        // No base in inbound: broader scopes' inbound does not run.
        'alone.xml': `<policies>
  <inbound><set-header name="X-Trail" exists-action="append"><value>alone</value></set-header></inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
  <on-error><base /></on-error>
</policies>`,
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('inlines the broader scopes at each base, in order', async () => {
    const response = await fetch(`${gateway.url}/scoped/s`);
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-trail']).toBe('operation,global,product,api');
    expect(response.headers.get('x-out-trail')).toBe('global,product,api,operation');
  });

  it('an operation without a policy inherits everything', async () => {
    const response = await fetch(`${gateway.url}/scoped/i`);
    expect(backend.received.at(-1)!.headers['x-trail']).toBe('global,product,api');
    expect(response.headers.get('x-out-trail')).toBe('global,product,api');
  });

  it('a section without base does not inherit', async () => {
    const response = await fetch(`${gateway.url}/scoped/a`);
    expect(backend.received.at(-1)!.headers['x-trail']).toBe('alone');
    expect(response.headers.get('x-out-trail')).toBe('global,product,api');
  });

  it('an API outside the product gets the global policy only', async () => {
    const response = await fetch(`${gateway.url}/bare/b`);
    expect(backend.received.at(-1)!.headers['x-trail']).toBe('global');
    expect(response.headers.get('x-out-trail')).toBe('global');
  });
});
