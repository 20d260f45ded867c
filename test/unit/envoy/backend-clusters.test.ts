import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime } from '../../../src/config/plan.js';
import { buildBootstrap } from '../../../src/envoy/bootstrap/bootstrap.js';

/**
 * Envoy closes an idle connection to a backend before the backend would: a request sent on a connection the backend
 * is closing for idleness at that moment is reset, and the client would get a 502 for a request never served. Node's
 * http server closes idle connections after 5 s (keepAliveTimeout), as do Apache's defaults.
 */
const nodeKeepAliveSeconds = 5;

describe('connections to backends', () => {
  it('are closed by Envoy when idle before a backend with a common keep-alive closes them', async () => {
    const config = parseConfig(
      `apis:
  - { id: plain, urlSuffix: plain, serviceUrl: "http://127.0.0.1:8081" }
  - { id: secure, urlSuffix: secure, serviceUrl: "https://backend.example" }
backends:
  - { id: other, url: "http://127.0.0.1:8082" }
`,
      'gateway.yaml',
    );
    const bootstrap = buildBootstrap(await planRuntime(config, { directory: '/etc/portcullis' }));
    const backendClusters = bootstrap.static_resources.clusters.filter(
      (cluster) =>
        cluster.name.startsWith('api_') ||
        cluster.name.startsWith('backend_') ||
        cluster.name.includes('dynamic'),
    );
    expect(backendClusters.length).toBeGreaterThanOrEqual(3);
    for (const cluster of backendClusters) {
      const idle =
        cluster.typed_extension_protocol_options?.['envoy.extensions.upstreams.http.v3.HttpProtocolOptions']
          .common_http_protocol_options?.idle_timeout;
      expect(idle, cluster.name).toMatch(/^\d+(\.\d+)?s$/);
      expect(Number.parseFloat(idle!), cluster.name).toBeLessThan(nodeKeepAliveSeconds);
    }
  });
});

describe('a WebSocket API’s cluster', () => {
  const clusters = async (limits: string) => {
    const config = parseConfig(
      `gateway: { limits: ${limits} }
apis:
  - { id: chat, type: websocket, urlSuffix: chat, serviceUrl: "http://127.0.0.1:8081/socket" }
  - { id: plain, urlSuffix: plain, serviceUrl: "http://127.0.0.1:8081" }
`,
      'gateway.yaml',
    );
    const bootstrap = buildBootstrap(await planRuntime(config, { directory: '/etc/portcullis' }));
    const byName = new Map(bootstrap.static_resources.clusters.map((cluster) => [cluster.name, cluster]));
    return { chat: byName.get('api_chat')!, plain: byName.get('api_plain')! };
  };

  it('carries at most gateway.limits.webSocketConnections requests, with room for one connection more', async () => {
    const { chat, plain } = await clusters('{ webSocketConnections: 40 }');
    expect(chat.circuit_breakers).toEqual({
      thresholds: [{ max_connections: 41, max_pending_requests: 1024, max_requests: 40 }],
    });
    // An HTTP API's cluster keeps Envoy's defaults.
    expect(plain.circuit_breakers).toBeUndefined();
  });

  it('is bounded at API Management’s 5,000 per unit by default', async () => {
    const { chat } = await clusters('{}');
    expect(chat.circuit_breakers?.thresholds[0]?.max_requests).toBe(5_000);
  });
});
