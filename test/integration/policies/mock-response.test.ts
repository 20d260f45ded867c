import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * An OpenAPI 3.0 definition whose responses carry what mock-response picks from: an example (two media types), a
 * schema only, and nothing.
 */
const definition = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  paths: {
    '/pets/{id}': {
      get: {
        operationId: 'getPet',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'the pet',
            content: {
              'application/json': { example: { id: 7, name: 'Rex', tags: ['good'] } },
              'application/xml': { example: '<pet><id>7</id><name>Rex</name></pet>' },
            },
          },
          '404': {
            description: 'no such pet',
            content: {
              'application/problem+json': {
                schema: {
                  type: 'object',
                  properties: {
                    status: { type: 'integer', example: 404 },
                    title: { type: 'string' },
                    seen: { type: 'string', format: 'date-time' },
                    details: { type: 'array', items: { $ref: '#/components/schemas/Detail' } },
                  },
                },
              },
            },
          },
          '204': { description: 'nothing' },
        },
      },
    },
  },
  components: {
    schemas: { Detail: { type: 'object', properties: { code: { type: 'string', enum: ['E1', 'E2'] } } } },
  },
});

/** Which mock the API policy answers with, by the request's X-Mock header (mock-response takes no expressions). */
const mocks = `<choose>
  <when condition="@(context.Request.Headers.GetValueOrDefault(&quot;X-Mock&quot;, &quot;&quot;) == &quot;xml&quot;)">
    <mock-response status-code="200" content-type="application/xml" />
  </when>
  <when condition="@(context.Request.Headers.GetValueOrDefault(&quot;X-Mock&quot;, &quot;&quot;) == &quot;404&quot;)">
    <mock-response status-code="404" />
  </when>
  <when condition="@(context.Request.Headers.GetValueOrDefault(&quot;X-Mock&quot;, &quot;&quot;) == &quot;204&quot;)">
    <mock-response status-code="204" />
  </when>
  <otherwise><mock-response /></otherwise>
</choose>`;

/**
 * mock-response answers with its status and the operation's declared content; the backend is not called.
 * learn.microsoft.com/azure/api-management/mock-response-policy: "It prefers response content examples, when
 * available. It generates sample responses from schemas, when schemas are provided and examples aren't. If neither
 * examples or schemas are found, responses with no content are returned." Without `content-type`, "First found
 * content type is used".
 */
describe('mock-response through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('mock', backend.url, [
        ['created', 'POST', '/things', 'created.xml'],
        ['default', 'GET', '/things', 'default.xml'],
      ])}
  - id: pets
    urlSuffix: pets
    serviceUrl: ${backend.url}
    definition: { format: openapi, file: pets.json }
    policy: pets.xml
`,
      {
        'created.xml': policy({
          inbound: '<mock-response status-code="201" content-type="application/json" />',
        }),
        'default.xml': policy({ inbound: '<mock-response />' }),
        'pets.json': definition,
        'pets.xml': policy({ inbound: mocks }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('answers with the declared example, in the first declared media type, with that Content-Type', async () => {
    const response = await fetch(`${gateway.url}/pets/pets/7`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ id: 7, name: 'Rex', tags: ['good'] });
    expect(backend.received).toHaveLength(0);
  });

  it('content-type picks the media type, and a text example is the body as written', async () => {
    const response = await fetch(`${gateway.url}/pets/pets/7`, { headers: { 'X-Mock': 'xml' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/xml');
    expect(await response.text()).toBe('<pet><id>7</id><name>Rex</name></pet>');
  });

  it('without an example, a sample generated from the schema (the same every time)', async () => {
    const first = await fetch(`${gateway.url}/pets/pets/7`, { headers: { 'X-Mock': '404' } });
    expect(first.status).toBe(404);
    expect(first.headers.get('content-type')).toBe('application/problem+json');
    const body = await first.text();
    expect(JSON.parse(body)).toEqual({
      status: 404,
      title: 'string',
      seen: '2024-01-01T00:00:00Z',
      details: [{ code: 'E1' }],
    });
    const again = await fetch(`${gateway.url}/pets/pets/7`, { headers: { 'X-Mock': '404' } });
    expect(await again.text()).toBe(body);
  });

  it('neither example nor schema: no content', async () => {
    const response = await fetch(`${gateway.url}/pets/pets/7`, { headers: { 'X-Mock': '204' } });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });

  // Envoy removes Content-Type from an answer without a body (the policy reference says so under mock-response).
  it('an operation that declares no responses: the configured status, no content', async () => {
    const response = await fetch(`${gateway.url}/mock/things`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('');
    expect(response.headers.get('content-type')).toBeNull();
    expect(backend.received).toHaveLength(0);
  });

  it('defaults to 200', async () => {
    const response = await fetch(`${gateway.url}/mock/things`);
    expect(response.status).toBe(200);
    expect(backend.received).toHaveLength(0);
  });
});
