import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';

const aliceKey = 'alice-key-0123456789abcdef';
const bobKey = 'bob-key-0123456789abcdef00';
const carolKey = 'carol-key-0123456789abcdef';

/** cache-lookup vary-by-developer / vary-by-developer-groups key on the user that owns the subscription. */
describe('caching per developer and per developer group', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  const cached = (varyBy: string) => `<policies>
  <inbound><base /><cache-lookup ${varyBy} downstream-caching-type="none" /></inbound>
  <backend><base /></backend>
  <outbound><base /><cache-store duration="120" /></outbound>
  <on-error><base /></on-error>
</policies>`;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `
apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: ${backend.url}
    subscriptionRequired: true
    operations:
      - { id: by-developer, method: GET, urlTemplate: /developer, policy: developer.xml }
      - { id: by-group, method: GET, urlTemplate: /group, policy: group.xml }
groups: [{ id: staff }, { id: students }]
users:
  - { id: alice, groups: [staff] }
  - { id: bob, groups: [staff] }
  - { id: carol, groups: [students] }
subscriptions:
  - { id: a, scope: all, primaryKey: ${aliceKey}, user: alice }
  - { id: b, scope: all, primaryKey: ${bobKey}, user: bob }
  - { id: c, scope: all, primaryKey: ${carolKey}, user: carol }
`,
      {
        'developer.xml': cached('vary-by-developer="true" vary-by-developer-groups="false"'),
        'group.xml': cached('vary-by-developer="false" vary-by-developer-groups="true"'),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  const calls = async (path: string, keys: string[]) => {
    const before = backend.received.length;
    for (const key of keys) {
      const response = await fetch(`${gateway.url}/courses${path}`, {
        headers: { 'Ocp-Apim-Subscription-Key': key },
      });
      expect(response.status).toBe(200);
      await response.text();
    }
    return backend.received.length - before;
  };

  it('keeps one cached answer per developer', async () => {
    // alice misses then hits; bob misses then hits.
    expect(await calls('/developer', [aliceKey, aliceKey, bobKey, bobKey])).toBe(2);
  });

  it('keeps one cached answer per set of groups', async () => {
    // alice (staff) misses; bob (staff) hits alice's entry; carol (students) misses.
    expect(await calls('/group', [aliceKey, bobKey, carolKey])).toBe(2);
  });
});
