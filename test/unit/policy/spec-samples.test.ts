/** The spec's sample policies (§4.3 items 3–5) load and behave as described, on a fake context. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildPipeline } from '../../../src/policy/pipeline.js';
import { PipelineRun } from '../../../src/policy/runner.js';
import { compileAt, fakeServices, header, policies, request, runAll } from '../../doubles/policy-services.js';

const xml = readFileSync(new URL('./fixtures/spec-course-api.xml', import.meta.url), 'utf8');
const namedValues = {
  'customer-key': { value: 'k-123', secret: true },
  'bulk-backend': 'https://bulk.example.com',
};
const api = compileAt(xml, 'api', namedValues);

async function inbound(init: Parameters<typeof request>[0]) {
  const run = new PipelineRun(buildPipeline({ api }), request(init), fakeServices());
  const outcome = await run.onRequest();
  if (outcome.kind !== 'forward') throw new Error(`expected a forward, got ${JSON.stringify(outcome)}`);
  return outcome.request;
}

describe('spec §4.3 item 3: inbound', () => {
  it('rewrites ?courseID=<id> to /api/Course/<id>', async () => {
    const r = await inbound({ url: 'https://gw.example.com/courses?courseID=42&x=1' });
    expect(r.pathAndQuery).toBe('/api/Course/42');
    expect(r.backend.baseUrl).toBeUndefined();
  });

  it('rewrites to /api/Course when Customer-Key equals the configured key', async () => {
    const r = await inbound({
      url: 'https://gw.example.com/courses?courseID=42',
      headers: [['Customer-Key', 'k-123']],
    });
    expect(r.pathAndQuery).toBe('/api/Course');
  });

  it('leaves the request alone for another key', async () => {
    const r = await inbound({ url: 'https://gw.example.com/courses', headers: [['Customer-Key', 'nope']] });
    expect(r.pathAndQuery).toBe('/courses');
  });

  it('sends bodies of 512000 bytes or more to another path on another backend', async () => {
    const small = await inbound({
      url: 'https://gw.example.com/courses',
      headers: [['Content-Length', '511999']],
    });
    expect(small.pathAndQuery).toBe('/courses');
    expect(small.backend.baseUrl).toBeUndefined();
    const large = await inbound({
      url: 'https://gw.example.com/courses',
      headers: [['Content-Length', '512000']],
    });
    expect(large.pathAndQuery).toBe('/api/Course/bulk');
    expect(large.backend).toEqual({ baseUrl: 'https://bulk.example.com', backendId: undefined });
  });

  it('does not need the request body (only headers are read)', () => {
    expect(buildPipeline({ api }).needs.requestBody).toBe(false);
  });
});

describe('spec §4.3 item 4: outbound', () => {
  it('turns a backend 200 into 401 Unauthorized with the bearer challenge and the fixed body', async () => {
    const { response } = await runAll(buildPipeline({ api }), request(), fakeServices(), {
      status: 200,
      body: '[]',
    });
    expect(response.status).toBe(401);
    expect(response.reason).toBe('Unauthorized');
    expect(header(response, 'WWW-Authenticate')).toEqual(['Bearer error="invalid_token"']);
    expect(response.body.toString()).toBe('The access token is missing or invalid.');
    expect(response.bodyChanged).toBe(true);
  });

  it('passes other statuses through', async () => {
    const { response } = await runAll(buildPipeline({ api }), request(), fakeServices(), {
      status: 404,
      body: 'nf',
    });
    expect(response.status).toBe(404);
    expect(response.body.toString()).toBe('nf');
    expect(response.bodyChanged).toBe(false);
  });
});

describe('spec §4.3 item 5: on-error', () => {
  // LastError.Message is API Management's "Header {name} was not found in the request. Access denied.", so the
  // marker travels in the header's name; failed-check-error-message is only the client's body.
  const failing = (name: string, message: string) =>
    compileAt(
      policies({
        inbound: `<base /><check-header name="${name}" failed-check-httpcode="500" failed-check-error-message="${message}" ignore-case="true" />`,
      }),
    );

  it('replaces the status when the error is a 500 carrying the marker', async () => {
    const pipeline = buildPipeline({ api, operation: failing('X-COURSE-FAULT', 'header missing') });
    const { response, run } = await runAll(pipeline, request(), fakeServices());
    expect(response.status).toBe(503);
    expect(response.body.toString()).toBe('Course service unavailable: HeaderNotFound');
    expect(run.context.lastError?.source).toBe('check-header');
    expect(run.context.lastError?.scope).toBe('operation');
    expect(run.context.lastError?.section).toBe('inbound');
  });

  it("keeps the error's own status without the marker", async () => {
    const pipeline = buildPipeline({ api, operation: failing('X-Course', 'other problem') });
    const { response } = await runAll(pipeline, request(), fakeServices());
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body.toString())).toEqual({ statusCode: 500, message: 'other problem' });
  });
});
