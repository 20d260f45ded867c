import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime, withBoundPorts } from '../../../src/config/plan.js';

const hash = `scrypt$16384$8$1$${Buffer.alloc(16, 1).toString('base64url')}$${Buffer.alloc(32, 2).toString('base64url')}`;

const portless = () =>
  parseConfig(
    [
      'gateway: { http: { host: 127.0.0.1, port: 0 } }',
      'admin: { host: 127.0.0.1, port: 0 }',
      'engine: { ports: [0, 0] }',
      'service: { port: 0 }',
      'management:',
      '  listen: { host: 127.0.0.1, port: 0 }',
      `  administrators: [{ name: admin, passwordHash: "${hash}" }]`,
      '',
    ].join('\n'),
    'gateway.yaml',
  );

describe('the runtime plan and the ports left to the system', () => {
  it('chooses no port: each one left at 0 is bound by the process that listens on it', async () => {
    const plan = await planRuntime(portless());
    expect(plan.gateway.port).toBe(0);
    expect(plan.admin.port).toBe(0);
    expect(plan.engine.endpoints.map((endpoint) => endpoint.port)).toEqual([0, 0]);
    expect(plan.service.port).toBe(0);
    expect(plan.management?.port).toBe(0);
    expect(plan.listeners?.map((listener) => listener.address.port)).toEqual([0, 0]);
  });

  it('takes the ports the processes reported and the ones Envoy bound, by listener name', async () => {
    const plan = withBoundPorts(await planRuntime(portless()), {
      engines: [41001, 41002],
      service: 41003,
      management: 41004,
      envoy: {
        admin: { host: '127.0.0.1', port: 41005 },
        listeners: new Map([
          ['gateway_http', { host: '127.0.0.1', port: 41006 }],
          ['management', { host: '127.0.0.1', port: 41007 }],
        ]),
      },
    });
    expect(plan.engine.endpoints).toEqual([
      { host: '127.0.0.1', port: 41001 },
      { host: '127.0.0.1', port: 41002 },
    ]);
    expect(plan.service).toEqual({ host: '127.0.0.1', port: 41003 });
    expect(plan.management).toEqual({ host: '127.0.0.1', port: 41004 });
    expect(plan.admin).toEqual({ host: '127.0.0.1', port: 41005 });
    expect(plan.gateway).toEqual({ host: '127.0.0.1', port: 41006 });
    expect(plan.listeners?.map((listener) => `${listener.name}:${listener.address.port}`)).toEqual([
      'gateway_http:41006',
      'management:41007',
    ]);
  });

  it('keeps configured ports and what nobody reported', async () => {
    const config = parseConfig('gateway: { http: { port: 18080 } }\nengine: { ports: [18081] }\n', 'g.yaml');
    const plan = withBoundPorts(await planRuntime(config), { service: 41003 });
    expect(plan.gateway).toEqual({ host: '0.0.0.0', port: 18080 });
    expect(plan.engine.endpoints).toEqual([{ host: '127.0.0.1', port: 18081 }]);
    expect(plan.admin).toEqual({ host: '127.0.0.1', port: 9901 });
    expect(plan.service.port).toBe(41003);
  });
});
