import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { details, type ManagementHarness, startManagement } from './harness.js';

const implied = `/apis/courses/operations/${encodeURIComponent('GET /api/Course/{id}')}`;

describe('/apis/{apiId}/operations', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('lists an operation without id under the id the gateway gives it, METHOD /template', async () => {
    const list = await h.request('GET', '/apis/courses/operations');
    expect(list.json.value.map((operation: { id: string }) => operation.id)).toEqual([
      'list-courses',
      'GET /api/Course/{id}',
    ]);
  });

  it('addresses that operation URL-encoded, and replacing it does not write an id into the file', async () => {
    const read = await h.request('GET', implied);
    expect(read.json).toEqual({ id: 'GET /api/Course/{id}', method: 'GET', urlTemplate: '/api/Course/{id}' });
    const replaced = await h.request('PUT', implied, {
      body: { method: 'GET', urlTemplate: '/api/Course/{id}', description: 'One course.' },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.json.id).toBe('GET /api/Course/{id}');
    expect(await h.read('gateway.yaml')).toContain(
      '      - method: GET\n        urlTemplate: "/api/Course/{id}"\n        description: One course.\n',
    );
    const patched = await h.request('PATCH', implied, { body: { displayName: 'Get one' } });
    expect(patched.json).toMatchObject({ id: 'GET /api/Course/{id}', displayName: 'Get one' });
    expect(await h.read('gateway.yaml')).not.toContain('id: GET');
  });

  it('keeps the URL’s id when a replacement changes the method or template', async () => {
    const response = await h.request('PUT', implied, {
      body: { method: 'HEAD', urlTemplate: '/api/Course/{id}' },
    });
    expect(response.status).toBe(200);
    expect((await h.request('GET', implied)).json).toEqual({
      id: 'GET /api/Course/{id}',
      method: 'HEAD',
      urlTemplate: '/api/Course/{id}',
    });
  });

  it('creates, replaces and deletes an operation with an id', async () => {
    const created = await h.request('PUT', '/apis/courses/operations/create-course', {
      body: { method: 'POST', urlTemplate: '/api/Course' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/apis/courses/operations/create-course');
    expect(h.store.running().config.apis[0]!.operations.map((o) => o.id)).toContain('create-course');
    expect((await h.request('DELETE', '/apis/courses/operations/create-course')).status).toBe(204);
    expect((await h.request('GET', '/apis/courses/operations/create-course')).status).toBe(404);
  });

  it('adds the first operation of an API that had none', async () => {
    const created = await h.request('PUT', '/apis/staff/operations/people', {
      body: { method: 'GET', urlTemplate: '/people' },
    });
    expect(created.status).toBe(201);
    expect((await h.request('GET', '/apis/staff')).json.operations).toEqual([
      { id: 'people', method: 'GET', urlTemplate: '/people' },
    ]);
  });

  it('answers 404 for the operations of an API that does not exist', async () => {
    const response = await h.request('PUT', '/apis/nope/operations/x', {
      body: { method: 'GET', urlTemplate: '/' },
    });
    expect(response.status).toBe(404);
    expect(response.json.error.message).toBe('API "nope" not found');
    expect((await h.request('GET', '/apis/nope/operations')).status).toBe(404);
  });

  it('refuses an invalid operation, located in the body', async () => {
    const response = await h.request('PUT', '/apis/courses/operations/x', {
      body: '{\n  "method": "FETCH",\n  "urlTemplate": "api"\n}',
    });
    expect(response.status).toBe(400);
    expect(details(response)).toEqual([
      expect.stringMatching(/^request body:2:3: method: /),
      'request body:3:3: urlTemplate: must start with "/", got "api"',
    ]);
  });
});
