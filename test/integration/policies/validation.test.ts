import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { policy } from '../../processes/gateway-files.js';

/**
 * The content validation policies through Envoy, against an API imported from OpenAPI
 * (learn.microsoft.com/azure/api-management/validate-content-policy, validate-parameters-policy,
 * validate-headers-policy, validate-status-code-policy; errors: the "Validation errors" table of
 * includes/api-management-validation-policy-error-reference.md): a request that does not conform never reaches the
 * backend (400), a backend answer that does not conform never reaches the client (502), and on-error sees
 * LastError.Reason "Bad request" or "Response not allowed".
 */
const definition = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  paths: {
    '/pets': {
      post: {
        operationId: 'addPet',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
        },
        responses: {
          '201': {
            description: 'made',
            headers: { 'X-Rate': { schema: { type: 'integer' } } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
          },
        },
      },
    },
    '/pets/{id}': {
      get: {
        operationId: 'getPet',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
          { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
        ],
        responses: {
          '200': {
            description: 'the pet',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
          },
        },
      },
    },
  },
  components: {
    schemas: {
      Pet: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
      },
    },
  },
});

const INTERNAL = 'The request could not be processed due to an internal error. Contact the API owner.';

const api = policy({
  inbound: `<validate-parameters specified-parameter-action="prevent" unspecified-parameter-action="prevent">
      <headers unspecified-parameter-action="ignore" />
    </validate-parameters>
    <validate-content unspecified-content-type-action="prevent" max-size="200" size-exceeded-action="prevent">
      <content type="application/json" validate-as="json" action="prevent" />
    </validate-content>`,
  outbound: `<validate-status-code unspecified-status-code-action="prevent" />
    <validate-headers specified-header-action="prevent" unspecified-header-action="ignore" />
    <validate-content unspecified-content-type-action="prevent" max-size="1000" size-exceeded-action="prevent">
      <content validate-as="json" action="prevent" />
    </validate-content>`,
  onError: `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>
    <set-header name="X-Source" exists-action="override"><value>@(context.LastError.Source)</value></set-header>`,
});

describe('the validation policies through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) => {
      if (request.url === '/pets/13') return { body: '{"age":1}' };
      if (request.url === '/pets/500') return { status: 500, body: 'at Pets.Controller.Get() line 42' };
      if (request.method === 'POST')
        return {
          status: 201,
          headers: request.body.includes('Bad') ? { 'x-rate': 'lots' } : { 'x-rate': '3' },
          body: request.body,
        };
      return { body: '{"name":"Rex"}' };
    });
    gateway = await startGateway(
      `apis:
  - id: pets
    urlSuffix: pets
    serviceUrl: ${backend.url}
    definition: { format: openapi, file: pets.json }
    policy: pets.xml
`,
      { 'pets.json': definition, 'pets.xml': api },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  const post = (body: string, contentType = 'application/json') =>
    fetch(`${gateway.url}/pets/pets`, { method: 'POST', headers: { 'Content-Type': contentType }, body });

  it('lets a conforming request and response through both ways', async () => {
    const created = await post('{"name":"Rex","age":2}');
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ name: 'Rex', age: 2 });
    const read = await fetch(`${gateway.url}/pets/pets/7?verbose=true`);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ name: 'Rex' });
  });

  it('validate-content refuses a body that does not conform, before the backend, with the documented message', async () => {
    const before = backend.received.length;
    // The importer inlines the Pet component, so the definition's schema goes by the generic name.
    const response = await post('{"age":-1}');
    expect(response.status).toBe(400);
    expect(response.headers.get('x-reason')).toBe('Bad request');
    expect(response.headers.get('x-source')).toBe('validate-content');
    expect(((await response.json()) as { message: string }).message).toMatch(
      /^Body of the request does not conform to the definition request body, which is associated with the content type application\/json\.\n\nThe value must have required property 'name'\. Line: 1, Position: 1$/,
    );
    expect(backend.received.length).toBe(before);
  });

  it('validate-content refuses a body over max-size and a content type the definition does not specify', async () => {
    const big = await post(`{"name":"${'x'.repeat(300)}"}`);
    expect(big.status).toBe(400);
    expect(((await big.json()) as { message: string }).message).toMatch(
      /^Request's body is \d+ bytes long and it exceeds the limit of 200 bytes\.$/,
    );
    const xml = await post('<pet/>', 'application/xml');
    expect(xml.status).toBe(400);
    expect(((await xml.json()) as { message: string }).message).toBe(
      'Unspecified content type application/xml is not allowed.',
    );
  });

  it('validate-parameters refuses a path or query value that cannot be read, and an undeclared query parameter', async () => {
    const path = await fetch(`${gateway.url}/pets/pets/seven`);
    expect(path.status).toBe(400);
    expect(((await path.json()) as { message: string }).message).toBe(
      "Value of the path parameter id couldn't be parsed according to the definition.\n\nInput string was not in a correct format.",
    );
    const query = await fetch(`${gateway.url}/pets/pets/7?verbose=maybe`);
    expect(query.status).toBe(400);
    expect(query.headers.get('x-source')).toBe('validate-parameters');
    const unspecified = await fetch(`${gateway.url}/pets/pets/7?debug=1`);
    expect(unspecified.status).toBe(400);
    expect(((await unspecified.json()) as { message: string }).message).toBe(
      'Unspecified query parameter debug is not allowed.',
    );
  });

  it('validate-status-code hides an undeclared status (and its stack trace) behind 502', async () => {
    const response = await fetch(`${gateway.url}/pets/pets/500`);
    expect(response.status).toBe(502);
    expect(response.headers.get('x-reason')).toBe('Response not allowed');
    const body = await response.text();
    expect(body).not.toContain('Pets.Controller');
    expect(JSON.parse(body).message).toBe(INTERNAL);
  });

  it('validate-content and validate-headers refuse a backend answer that does not conform with 502', async () => {
    const body = await fetch(`${gateway.url}/pets/pets/13`);
    expect(body.status).toBe(502);
    expect(body.headers.get('x-source')).toBe('validate-content');
    expect(((await body.json()) as { message: string }).message).toBe(INTERNAL);
    const header = await post('{"name":"Bad"}');
    expect(header.status).toBe(502);
    expect(header.headers.get('x-source')).toBe('validate-headers');
  });
});
