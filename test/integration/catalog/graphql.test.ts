import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GraphqlBackend, startGraphqlBackend } from '../../doubles/graphql-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';

/**
 * GraphQL pass-through APIs (https://learn.microsoft.com/azure/api-management/graphql-api) with
 * validate-graphql-request: a real GraphQL server (graphql-http on graphql-js) behind a real Envoy and the engine,
 * called with fetch as a GraphQL client calls it.
 */
describe('a GraphQL API, through Envoy', () => {
  let backend: GraphqlBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startGraphqlBackend();
    gateway = await startGateway(
      `
apis:
  - id: missions
    type: graphql
    urlSuffix: missions
    serviceUrl: ${backend.url}/graphql
    graphql:
      schema: missions.graphql
    policy: |
      <policies>
        <inbound><base />
          <cors>
            <allowed-origins><origin>http://app.example</origin></allowed-origins>
            <allowed-methods><method>GET</method><method>POST</method></allowed-methods>
            <allowed-headers><header>content-type</header></allowed-headers>
          </cors>
          <validate-graphql-request error-variable-name="gqlErrors" max-size="2048" max-depth="3">
            <authorize>
              <rule path="/__*" action="reject" />
              <rule path="/Mutation/deleteUser" action="reject" />
              <rule path="/User/email" action="@(context.Request.Headers.GetValueOrDefault(&quot;x-role&quot;, &quot;&quot;) == &quot;admin&quot; ? &quot;allow&quot; : &quot;remove&quot;)" />
            </authorize>
          </validate-graphql-request>
          <set-header name="x-operation-name" exists-action="override">
            <value>@(context.Request.Method == "POST" ? (string)context.Request.Body.As&lt;JObject&gt;(preserveContent: true)["operationName"] : context.Request.Url.Query.GetValueOrDefault("operationName", ""))</value>
          </set-header>
        </inbound>
        <backend><base /></backend>
        <outbound><base /></outbound>
        <on-error><base />
          <set-header name="x-last-error" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>
        </on-error>
      </policies>
`,
      { 'missions.graphql': backend.sdl },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  interface Answer {
    data?: unknown;
    errors: { message: string; locations?: unknown }[];
  }
  const answerOf = async (response: Response) => (await response.json()) as Answer;

  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/missions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(payload),
    });

  it('passes a valid query to the server and its answer back (POST)', async () => {
    const response = await post({ query: 'query Names { missions { name } }', operationName: 'Names' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { missions: [{ name: 'Apollo' }, { name: 'Gemini' }] } });
    const asked = backend.received.at(-1)!;
    expect(asked.operationName).toBe('Names');
    // The operation name, read by a policy expression from the body as API Management's expressions read it.
    expect(asked.headers['x-operation-name']).toBe('Names');
  });

  it('passes a GET with ?query= through', async () => {
    const query = encodeURIComponent('{ missions(limit: 1) { id } }');
    const response = await fetch(`${gateway.url}/missions?query=${query}`, {
      headers: { accept: 'application/json' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { missions: [{ id: '1' }] } });
  });

  it('refuses a query deeper than max-depth: 400, an errors block, the server never asked', async () => {
    const before = backend.received.length;
    const response = await post({ query: '{ missions { crew { friends { name } } } }' });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-last-error')).toBe('QueryDepthExceeded');
    const body = await response.json();
    expect(body).toEqual({ errors: [{ message: 'The query is 4 levels deep, more than the 3 allowed.' }] });
    expect(backend.received.length).toBe(before);
  });

  it('refuses a payload larger than max-size', async () => {
    const before = backend.received.length;
    const response = await post({ query: `{ missions { name } }${' '.repeat(3000)}` });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-last-error')).toBe('RequestSizeLimitExceeded');
    expect((await answerOf(response)).errors[0]!.message).toMatch(/more than the 2048 bytes allowed/);
    expect(backend.received.length).toBe(before);
  });

  it('refuses a query the schema does not allow, with graphql-js messages and locations', async () => {
    const response = await post({ query: '{ missions { title } }' });
    expect(response.status).toBe(400);
    const body = await answerOf(response);
    expect(body.data).toBeUndefined();
    expect(body.errors[0]).toMatchObject({ locations: [{ line: 1, column: 14 }] });
    expect(body.errors[0]!.message).toMatch(/Cannot query field "title" on type "Mission"/);
  });

  it('authorize remove: the field leaves the query the server runs; its field error joins the answer', async () => {
    const response = await post({ query: '{ user { id email } }' });
    expect(response.status).toBe(200);
    // A field error: the data the server gave, and the removed field's error beside it.
    expect(await response.json()).toEqual({
      data: { user: { id: 'u1' } },
      errors: [
        {
          message: 'The field "email" was removed from the request (not authorized).',
          locations: [{ line: 1, column: 13 }],
        },
      ],
    });
    expect(backend.received.at(-1)!.query).not.toMatch(/email/);
    // The action is an expression: for an admin the field stays.
    const admin = await post({ query: '{ user { id email } }' }, { 'x-role': 'admin' });
    expect(await admin.json()).toEqual({ data: { user: { id: 'u1', email: 'pilot@example.com' } } });
  });

  it('authorize reject: a mutation and introspection are refused before the server', async () => {
    const before = backend.received.length;
    const mutation = await post({ query: 'mutation { deleteUser(id: "u1") }' });
    expect(mutation.status).toBe(400);
    expect(mutation.headers.get('x-last-error')).toBe('FieldRejected');
    expect(await mutation.json()).toEqual({
      errors: [{ message: 'The field "Mutation.deleteUser" is not authorized.' }],
    });
    const introspection = await post({ query: '{ __schema { queryType { name } } }' });
    expect(introspection.status).toBe(400);
    expect(backend.received.length).toBe(before);
  });

  it("answers a browser's CORS preflight (cors before validate-graphql-request), and the POST that follows", async () => {
    const preflight = await fetch(`${gateway.url}/missions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://app.example');
    const response = await post({ query: '{ user { id } }' }, { origin: 'http://app.example' });
    expect(response.headers.get('access-control-allow-origin')).toBe('http://app.example');
    expect(await response.json()).toEqual({ data: { user: { id: 'u1' } } });
  });

  it('answers a request that is not GraphQL (a POST that is not JSON) with 404, as an unknown operation', async () => {
    const response = await fetch(`${gateway.url}/missions`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{ missions { name } }',
    });
    expect(response.status).toBe(404);
  });
});
