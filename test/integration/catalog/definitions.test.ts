import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';

const fixture = (path: string) => fileURLToPath(new URL(`../../fixtures/catalog/${path}`, import.meta.url));

/** The operations header the API policy sets, to show which imported operation matched. */
const operationHeader = `<policies>
  <inbound><base /><set-header name="x-operation" exists-action="override"><value>@(context.Operation.Id)</value></set-header></inbound>
  <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
</policies>`;

/** APIs published from their definitions (OpenAPI 3.1, Swagger 2.0, WADL, WSDL 2.0), called through Envoy with policies. */
describe('APIs published from definition files, through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    const api = (id: string, format: string, file: string, path = '') => `
  - id: ${id}
    urlSuffix: ${id}
    serviceUrl: ${backend.url}${path}
    definition: { format: ${format}, file: ${fixture(file)} }
    policy: ${JSON.stringify(operationHeader)}`;
    gateway =
      await startGateway(`apis:${api('library', 'openapi', 'openapi/library-3.1.json', '/api')}${api('pets', 'openapi', 'openapi/petstore-2.0.json', '/v2')}${api('courses', 'wadl', 'wadl/courses.wadl', '/rest')}${api('hotel', 'wsdl', 'wsdl/hotel-2.0.wsdl', '/reservations')}
`);
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('OpenAPI 3.1: the operation matched by its template reaches the backend with its policy applied', async () => {
    const response = await fetch(`${gateway.url}/library/books/978-0131103627`);
    expect(response.status).toBe(200);
    const seen = backend.received.at(-1)!;
    expect(seen.url).toBe('/api/books/978-0131103627');
    expect(seen.headers['x-operation']).toBe('getBook');
  });

  it('Swagger 2.0: a literal template wins over a parameter, and an unknown operation is a 404', async () => {
    await fetch(`${gateway.url}/pets/pet/findByTags?tags=a`);
    expect(backend.received.at(-1)!.headers['x-operation']).toBe('findPetsByTags');
    await fetch(`${gateway.url}/pets/pet/7`);
    expect(backend.received.at(-1)!.headers['x-operation']).toBe('getPetById');
    expect((await fetch(`${gateway.url}/pets/store`)).status).toBe(404);
  });

  it('WADL: nested resources with template parameters', async () => {
    await fetch(`${gateway.url}/courses/courses`);
    expect(backend.received.at(-1)!.headers['x-operation']).toBe('listCourses');
    expect(backend.received.at(-1)!.url).toBe('/rest/courses');
  });

  it('WSDL 2.0: a SOAP 1.2 call matched by the action parameter of its content type', async () => {
    const response = await fetch(`${gateway.url}/hotel`, {
      method: 'POST',
      headers: {
        'content-type':
          'application/soap+xml; charset=utf-8; action="http://greath.example.com/2004/wsdl/resSvc/opCheckAvailability"',
      },
      body: '<?xml version="1.0"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><checkAvailability xmlns="http://greath.example.com/2004/schemas/resSvc"/></env:Body></env:Envelope>',
    });
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-operation']).toMatch(/CheckAvailability/i);
    expect(backend.received.at(-1)!.url).toBe('/reservations');
  });
});
