import { defineElement } from '../element.js';
import { PolicyError } from '../runtime.js';
import { ALL_SCOPES, EMPTY, each, str } from '../schema.js';

const SERVICE_FABRIC = [
  'sf-resolve-condition',
  'sf-service-instance-name',
  'sf-partition-key',
  'sf-listener-name',
  'sf-replica-type',
] as const;
const DAPR = ['dapr-app-id', 'dapr-method', 'dapr-namespace'] as const;

/** Chooses the backend: a base URL, or a named backend of the gateway configuration. */
export const setBackendService = defineElement({
  name: 'set-backend-service',
  summary: 'Routes the request to another backend (base-url or backend-id).',
  sections: ['inbound', 'backend'],
  scopes: ALL_SCOPES,
  attributes: {
    'base-url': str(),
    'backend-id': str(),
    ...each([...SERVICE_FABRIC, ...DAPR], str()),
  },
  content: EMPTY,
  compile(node, c) {
    if (SERVICE_FABRIC.some((a) => node.has(a))) {
      c.error(
        node,
        'not-supported',
        'set-backend-service with sf-* attributes is not supported: needs Azure Service Fabric',
      );
    }
    if (DAPR.some((a) => node.has(a))) {
      c.error(
        node,
        'not-supported',
        'set-backend-service with dapr-* attributes is not supported: needs a Dapr sidecar',
      );
    }
    const baseUrl = node.getter('base-url');
    const backendId = node.getter('backend-id');
    if ((baseUrl === undefined) === (backendId === undefined)) {
      c.error(node, 'attribute', 'set-backend-service needs exactly one of base-url and backend-id');
    }
    const literalUrl = node.literal('base-url');
    if (typeof literalUrl === 'string' && !URL.canParse(literalUrl)) {
      c.error(
        node,
        'attribute',
        `set-backend-service/@base-url must be an absolute URL, got "${literalUrl}"`,
      );
    }
    if (baseUrl !== undefined) {
      return (run) => {
        const url = baseUrl(run);
        if (!URL.canParse(url))
          throw new TypeError(`set-backend-service/@base-url must be an absolute URL, got "${url}"`);
        run.backend = { baseUrl: url, backendId: undefined };
        return 'next';
      };
    }
    const id = backendId ?? (() => '');
    return (run) => {
      const name = id(run);
      const lookup = run.services.backends;
      if (lookup.choose === undefined) {
        const backend = lookup.get(name);
        if (backend === undefined) throw backendNotFound(name);
        run.backend = { baseUrl: backend.url, backendId: backend.id };
        return 'next';
      }
      // A pool with session affinity reads its session cookie as the request is now (a policy may have set it).
      const cookies = (cookie: string) => requestCookie(run.context.request.headers.peek('Cookie'), cookie);
      return lookup.choose(name, cookies).then((choice) => {
        switch (choice.kind) {
          case 'unknown':
            throw backendNotFound(name);
          // A tripped circuit breaker (every member of a pool tripped): API Management answers 503 Service
          // Unavailable (https://learn.microsoft.com/azure/api-management/backends#circuit-breaker).
          case 'unavailable':
            throw new PolicyError('BackendUnavailable', choice.message, 503, 'Service Unavailable');
          case 'backend':
            run.backend = {
              baseUrl: choice.backend.url,
              backendId: choice.backend.id,
              ...(choice.poolId === undefined ? {} : { poolId: choice.poolId }),
              ...(choice.session === undefined ? {} : { session: choice.session }),
            };
            return 'next';
        }
      });
    };
  },
});

function backendNotFound(name: string): PolicyError {
  return new PolicyError(
    'BackendNotFound',
    `Backend with id '${name}' could not be found.`,
    500,
    'Internal server error',
  );
}

/** The first value of cookie `name` in the request's `Cookie` headers (`a=1; b=2`). */
function requestCookie(headers: readonly string[] | undefined, name: string): string | undefined {
  for (const header of headers ?? [])
    for (const part of header.split(';')) {
      const eq = part.indexOf('=');
      if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
    }
  return undefined;
}
