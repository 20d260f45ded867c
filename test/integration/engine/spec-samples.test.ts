import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';

/** The spec's sample policies (§4.3 items 3–5) on live traffic through a real Envoy and the engine. */
describe('spec §4.3 sample policies through Envoy', () => {
  let courses: EchoBackend;
  let bulk: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    courses = await startEchoBackend();
    bulk = await startEchoBackend();
    gateway = await startGateway(
      `
namedValues:
  customer-key: { value: "k-123", secret: true }
  bulk-backend: ${bulk.url}
apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: ${courses.url}
    policy: inbound.xml
    operations:
      - { id: list, method: GET, urlTemplate: /api/Course }
      - { id: get, method: GET, urlTemplate: "/api/Course/{id}" }
      - { id: create, method: POST, urlTemplate: /api/Course }
  - id: guarded
    urlSuffix: guarded
    serviceUrl: ${courses.url}
    policy: outbound.xml
    operations:
      - { method: GET, urlTemplate: /api/Course }
  - id: faulty
    urlSuffix: faulty
    serviceUrl: ${courses.url}
    policy: on-error.xml
    operations:
      - { method: GET, urlTemplate: /api/Course }
`,
      {
        'inbound.xml': `<policies>
  <inbound>
    <base />
    <set-variable name="courseID" value="@(context.Request.Url.Query.GetValueOrDefault("courseID", ""))" />
    <choose>
      <when condition="@((string)context.Variables["courseID"] != "")">
        <rewrite-uri template="@("/api/Course/" + (string)context.Variables["courseID"])" copy-unmatched-params="false" />
      </when>
    </choose>
    <choose>
      <when condition="@(context.Request.Headers.GetValueOrDefault("Customer-Key", "") == "{{customer-key}}")">
        <rewrite-uri template="/api/Course" />
      </when>
    </choose>
    <choose>
      <when condition="@(int.Parse(context.Request.Headers.GetValueOrDefault("Content-Length", "0")) < 512000)" />
      <otherwise>
        <rewrite-uri template="/api/Course/bulk" />
        <set-backend-service base-url="{{bulk-backend}}" />
      </otherwise>
    </choose>
  </inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
  <on-error><base /></on-error>
</policies>`,
        'outbound.xml': `<policies>
  <inbound><base /></inbound>
  <backend><base /></backend>
  <outbound>
    <base />
    <choose>
      <when condition="@(context.Response.StatusCode == 200)">
        <return-response>
          <set-status code="401" reason="Unauthorized" />
          <set-header name="WWW-Authenticate" exists-action="override">
            <value>Bearer error="invalid_token"</value>
          </set-header>
          <set-body>The access token is missing or invalid.</set-body>
        </return-response>
      </when>
    </choose>
  </outbound>
  <on-error><base /></on-error>
</policies>`,
        'on-error.xml': `<policies>
  <inbound>
    <base />
    <set-variable name="fault" value="@(int.Parse(context.Request.Headers.GetValueOrDefault("X-Fault", "0")))" />
  </inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
  <on-error>
    <base />
    <choose>
      <when condition="@(context.Response.StatusCode == 500 &amp;&amp; context.LastError.Message.Contains("COURSE-FAULT"))">
        <return-response>
          <set-status code="503" reason="Service Unavailable" />
          <set-body>@("Course service unavailable: " + context.LastError.Reason)</set-body>
        </return-response>
      </when>
    </choose>
  </on-error>
</policies>`,
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await courses?.close();
    await bulk?.close();
  });

  it('3: the courseID query parameter rewrites the path to /api/Course/<id>', async () => {
    const response = await fetch(`${gateway.url}/courses/api/Course?courseID=7`);
    expect(response.status).toBe(200);
    expect(courses.received.at(-1)!.url).toBe('/api/Course/7');
  });

  it('3: a request without courseID keeps its path', async () => {
    await fetch(`${gateway.url}/courses/api/Course/3`);
    expect(courses.received.at(-1)!.url).toBe('/api/Course/3');
  });

  it('3: the configured Customer-Key rewrites to /api/Course, another key does not', async () => {
    await fetch(`${gateway.url}/courses/api/Course/3`, { headers: { 'Customer-Key': 'k-123' } });
    expect(courses.received.at(-1)!.url).toBe('/api/Course');
    await fetch(`${gateway.url}/courses/api/Course/3`, { headers: { 'Customer-Key': 'wrong' } });
    expect(courses.received.at(-1)!.url).toBe('/api/Course/3');
  });

  it('3: a body of 512000 bytes or more goes to another path on another backend', async () => {
    const before = courses.received.length;
    const small = await fetch(`${gateway.url}/courses/api/Course`, {
      method: 'POST',
      body: 'x'.repeat(511_999),
    });
    expect(small.status).toBe(200);
    expect(courses.received.at(-1)!.url).toBe('/api/Course');
    const large = await fetch(`${gateway.url}/courses/api/Course`, {
      method: 'POST',
      body: 'x'.repeat(512_000),
    });
    expect(large.status).toBe(200);
    expect(bulk.received.at(-1)!.url).toBe('/api/Course/bulk');
    expect(bulk.received.at(-1)!.body.length).toBe(512_000);
    expect(courses.received.length).toBe(before + 1);
  });

  it('4: a 200 from the backend becomes 401 Unauthorized with the bearer challenge and the fixed body', async () => {
    const response = await fetch(`${gateway.url}/guarded/api/Course`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await response.text()).toBe('The access token is missing or invalid.');
  });

  it('5: on-error replaces a 500 whose LastError message carries the marker', async () => {
    const response = await fetch(`${gateway.url}/faulty/api/Course`, {
      headers: { 'X-Fault': 'COURSE-FAULT' },
    });
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('Course service unavailable: ExpressionValueEvaluationFailure');
  });

  it('5: without the marker, API Management default 500 with a safe body', async () => {
    const response = await fetch(`${gateway.url}/faulty/api/Course`, { headers: { 'X-Fault': 'oops' } });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ statusCode: 500, message: 'Internal server error' });
  });

  it('a known API without the requested operation answers 404 through on-error (OperationNotFound)', async () => {
    const response = await fetch(`${gateway.url}/courses/api/Nothing`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ statusCode: 404, message: 'Resource not found' });
  });

  it('strips an internal routing header sent by the client', async () => {
    const before = bulk.received.length;
    await fetch(`${gateway.url}/courses/api/Course/5`, {
      headers: { 'x-portcullis-backend': 'dynamic_http' },
    });
    expect(courses.received.at(-1)!.url).toBe('/api/Course/5');
    expect(courses.received.at(-1)!.headers['x-portcullis-backend']).toBeUndefined();
    expect(bulk.received.length).toBe(before);
  });
});
