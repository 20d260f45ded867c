import { configId, reportUnused } from '../artifacts.js';
import { informationFile, type ResourceKind } from '../context.js';

/** Why the parts of a backend Portcullis has no place for are not carried over. */
const reasons: Record<string, string> = {
  description: 'backend descriptions are not kept',
  title: 'backend titles are not kept',
  credentials:
    'backend credentials (headers, query, authorization, certificates) are not applied by Portcullis backends: ' +
    'set them in the policy (set-header, authentication-basic, authentication-certificate)',
  circuitBreaker:
    'circuit breaker rules are not supported (Envoy outlier detection is not configured per backend)',
  pool: 'load-balanced pools are not supported',
  proxy: 'a forward proxy for backend calls is not supported',
  tls: 'per-backend TLS validation settings are not supported (see tls.backends for client certificates)',
  resourceId: 'the Azure resource of a backend is not used',
  properties: 'Service Fabric settings are not supported',
};

/** `backends/<id>/backendInformation.json`: the configuration's `backends` (id and URL). */
export const backends: ResourceKind = {
  name: 'backends',
  importInto({ artifacts, document }) {
    for (const name of artifacts.children('backends')) {
      const file = `backends/${name}/backendInformation.json`;
      const properties = artifacts.properties(file, 'backends', name);
      reportUnused(artifacts, file, properties, ['url', 'protocol', 'type'], reasons);
      if (properties.type === 'Pool' || properties.type === 'pool') {
        artifacts.skip(file, 'type Pool: load-balanced pools are not supported, the backend is left out');
        continue;
      }
      if (properties.protocol === 'soap') {
        artifacts.skip(
          file,
          'protocol soap: the backend is called over plain HTTP, as SOAP pass-through does',
        );
      }
      const url = typeof properties.url === 'string' ? properties.url : undefined;
      if (url === undefined || !/^https?:\/\//.test(url)) {
        artifacts.skip(
          file,
          `url must be an http(s) URL, got ${JSON.stringify(url ?? null)}: the backend is left out`,
        );
        continue;
      }
      document.backends.push({ id: configId(artifacts, file, name), url });
    }
  },
  exportFrom({ config, output }) {
    for (const backend of config.backends) {
      output.set(
        `backends/${backend.id}/backendInformation.json`,
        informationFile({ url: backend.url, protocol: 'http' }),
      );
    }
  },
};
