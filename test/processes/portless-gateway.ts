/**
 * A gateway whose every port is left to the system (0): the gateway listener and the admin (Envoy binds them), two
 * engines and the service (each binds its own and reports it). One API, `echo` (GET /echo/things/{name}, in the
 * product `echo`), forwarded to `serviceUrl` and run through `policy` when given; an authorization server that
 * calls itself http://localhost. The tests that kill and restart `up`'s children start from it and add sections.
 */
export function portlessGateway(serviceUrl: string, policy?: string) {
  return {
    gateway: { http: { host: '127.0.0.1', port: 0 } },
    admin: { host: '127.0.0.1', port: 0 },
    engine: { ports: [0, 0] },
    service: { host: '127.0.0.1', port: 0 },
    envoy: { concurrency: 1 },
    apis: [
      {
        id: 'echo',
        urlSuffix: 'echo',
        serviceUrl,
        ...(policy === undefined ? {} : { policy }),
        operations: [{ id: 'get-thing', method: 'GET', urlTemplate: '/things/{name}' }],
      },
    ],
    products: [{ id: 'echo', apis: ['echo'] }],
    auth: { issuer: 'http://localhost', baseUrl: 'http://localhost', cookieSecure: false },
  };
}
