import { configId, reportUnused } from '../artifacts.js';
import { type ImportContext, informationFile, type ResourceKind } from '../context.js';
import type { BackendEntry } from '../model.js';

/**
 * `backends/<id>/backendInformation.json` ⇄ the configuration's `backends`: API Management's backend entity
 * (https://learn.microsoft.com/azure/api-management/backends) with its URL, description, credentials (headers, query
 * parameters, Authorization), TLS checks, circuit breaker and pool (with its session affinity). Named values in credentials stay `{{name}}`
 * references, resolved when the configuration loads.
 */

/** Why the parts of a backend Portcullis has no place for are not carried over. */
const reasons: Record<string, string> = {
  title: 'backend titles are not kept',
  proxy: 'a forward proxy for backend calls is not supported',
  resourceId: 'the Azure resource of a backend is not used',
  properties: 'Service Fabric settings are not supported',
};

type Properties = Record<string, unknown>;
const isRecord = (value: unknown): value is Properties =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Only the keys the configuration knows, so an entity API Management extended still loads. */
function pick(value: unknown, keys: readonly string[]): Properties | undefined {
  if (!isRecord(value)) return undefined;
  const picked = Object.fromEntries(
    keys.flatMap((key) => (value[key] === undefined ? [] : [[key, value[key]]])),
  );
  return Object.keys(picked).length > 0 ? picked : undefined;
}

/**
 * A pool's session awareness (`sessionAffinity.sessionId`: source Cookie and the cookie's name). The keys some
 * samples add beside it (`enabled`, `affinityType`, `cookieName`) are not the entity's documented ones: only
 * `sessionId` is read.
 */
function sessionAffinityOf(
  artifacts: ImportContext['artifacts'],
  file: string,
  pool: unknown,
): { sessionAffinity?: { sessionId: { source: string; name: string } } } {
  const affinity = isRecord(pool) ? pool.sessionAffinity : undefined;
  if (affinity === undefined || affinity === null) return {};
  const sessionId = isRecord(affinity) ? affinity.sessionId : undefined;
  if (
    !isRecord(sessionId) ||
    String(sessionId.source).toLowerCase() !== 'cookie' ||
    typeof sessionId.name !== 'string'
  ) {
    artifacts.skip(
      file,
      'pool.sessionAffinity: only a session id from a cookie (sessionId: { source: Cookie, name }) is supported; requests spread by weight',
    );
    return {};
  }
  return { sessionAffinity: { sessionId: { source: 'Cookie', name: sessionId.name } } };
}

export const backends: ResourceKind = {
  name: 'backends',
  importInto({ artifacts, document }) {
    for (const name of artifacts.children('backends')) {
      const file = `backends/${name}/backendInformation.json`;
      const properties = artifacts.properties(file, 'backends', name);
      const used = ['url', 'protocol', 'type', 'description', 'credentials', 'tls', 'circuitBreaker', 'pool'];
      reportUnused(artifacts, file, properties, used, reasons);
      const entry: BackendEntry = { id: configId(artifacts, file, name) };
      if (typeof properties.description === 'string') entry.description = properties.description;
      if (String(properties.type).toLowerCase() === 'pool') {
        const services =
          isRecord(properties.pool) && Array.isArray(properties.pool.services)
            ? properties.pool.services
            : [];
        entry.type = 'pool';
        entry.pool = {
          services: services.filter(isRecord).map((service) => {
            // `/backends/<name>` or a full resource id: the member's id is its last segment, as a config id.
            const reference = String(service.id ?? '');
            const member = reference.slice(reference.lastIndexOf('/') + 1);
            return {
              id: configId(artifacts, `backends/${member}/backendInformation.json`, member),
              ...(typeof service.priority === 'number' ? { priority: service.priority } : {}),
              ...(typeof service.weight === 'number' ? { weight: service.weight } : {}),
            };
          }),
          ...sessionAffinityOf(artifacts, file, properties.pool),
        };
        document.backends.push(entry);
        continue;
      }
      if (properties.protocol === 'soap')
        artifacts.skip(
          file,
          'protocol soap: the backend is called over plain HTTP, as SOAP pass-through does',
        );
      const url = typeof properties.url === 'string' ? properties.url : undefined;
      if (url === undefined || !/^https?:\/\//.test(url)) {
        artifacts.skip(
          file,
          `url must be an http(s) URL, got ${JSON.stringify(url ?? null)}: the backend is left out`,
        );
        continue;
      }
      entry.url = url;
      const credentials = pick(properties.credentials, ['header', 'query', 'authorization']);
      if (
        isRecord(properties.credentials) &&
        (properties.credentials.certificateIds || properties.credentials.certificate)
      )
        artifacts.skip(
          file,
          'credentials.certificateIds: certificates are not carried over; name one of tls.certificates in credentials.certificateIds',
        );
      if (credentials) entry.credentials = credentials;
      const tls = pick(properties.tls, ['validateCertificateChain', 'validateCertificateName']);
      if (tls) entry.tls = tls;
      const rules = isRecord(properties.circuitBreaker) ? properties.circuitBreaker.rules : undefined;
      if (Array.isArray(rules) && rules.length > 0)
        entry.circuitBreaker = {
          rules: rules.filter(isRecord).map((rule) => ({
            ...pick(rule, ['name', 'tripDuration', 'acceptRetryAfter']),
            ...(isRecord(rule.failureCondition)
              ? {
                  failureCondition: pick(rule.failureCondition, [
                    'count',
                    'percentage',
                    'interval',
                    'statusCodeRanges',
                    'errorReasons',
                  ]),
                }
              : {}),
          })),
        };
      document.backends.push(entry);
    }
  },
  exportFrom({ config, output }) {
    for (const backend of config.backends) {
      const { id: _id, type, protocol: _protocol, pool, url, ...rest } = backend;
      const properties =
        type === 'pool'
          ? {
              ...rest,
              type: 'Pool',
              pool: {
                services: (pool?.services ?? []).map((service) => ({
                  ...service,
                  id: `/backends/${service.id}`,
                })),
                ...(pool?.sessionAffinity
                  ? {
                      sessionAffinity: {
                        sessionId: { source: 'Cookie', name: pool.sessionAffinity.sessionId.name },
                      },
                    }
                  : {}),
              },
            }
          : {
              ...rest,
              url,
              protocol: 'http',
              // Portcullis's own: a token from its identities, a CA file; API Management keeps them elsewhere.
              ...(rest.credentials
                ? {
                    credentials: pick(rest.credentials, [
                      'header',
                      'query',
                      'authorization',
                      'certificateIds',
                    ]),
                  }
                : {}),
              ...(rest.tls
                ? { tls: pick(rest.tls, ['validateCertificateChain', 'validateCertificateName']) }
                : {}),
            };
      output.set(`backends/${backend.id}/backendInformation.json`, informationFile(properties));
    }
  },
};
