import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mergePatch } from '../../../src/management/collection.js';
import { details, type ManagementHarness, startManagement } from './harness.js';

describe('collections: the generic verbs', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('lists entries as { value, count } and reads one with an ETag that is stable until it changes', async () => {
    const list = await h.request('GET', '/groups');
    expect(list.json).toEqual({ value: [{ id: 'teachers', name: 'Teachers' }], count: 1 });
    const one = await h.request('GET', '/groups/teachers');
    expect(one.json).toEqual({ id: 'teachers', name: 'Teachers' });
    const etag = one.headers.get('etag');
    expect(etag).toMatch(/^"/);
    expect((await h.request('GET', '/groups/teachers')).headers.get('etag')).toBe(etag);
    await h.request('PATCH', '/groups/teachers', { body: { name: 'All teachers' } });
    expect((await h.request('GET', '/groups/teachers')).headers.get('etag')).not.toBe(etag);
  });

  it('answers 404 in the error shape for an entry that does not exist', async () => {
    const missing = await h.request('GET', '/groups/nobody');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({
      error: { code: 'ResourceNotFound', message: 'group "nobody" not found' },
    });
    expect((await h.request('DELETE', '/groups/nobody')).status).toBe(404);
    expect((await h.request('PATCH', '/groups/nobody', { body: {} })).status).toBe(404);
  });

  it('creates with PUT (201, Location, ETag of what GET then answers) and replaces with PUT (200)', async () => {
    const created = await h.request('PUT', '/backends/reports', { body: { url: 'http://127.0.0.1:9100' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/backends/reports');
    expect(created.json).toEqual({ id: 'reports', url: 'http://127.0.0.1:9100' });
    const read = await h.request('GET', '/backends/reports');
    expect(read.json).toEqual(created.json);
    expect(read.headers.get('etag')).toBe(created.headers.get('etag'));

    const replaced = await h.request('PUT', '/backends/reports', {
      body: { id: 'reports', url: 'http://127.0.0.1:9200' },
    });
    expect(replaced.status).toBe(200);
    expect((await h.request('GET', '/backends')).json.value).toEqual([
      { id: 'bulk', url: 'http://127.0.0.1:8082' },
      { id: 'reports', url: 'http://127.0.0.1:9200' },
    ]);
    expect(h.store.running().generation).toBe(3);
  });

  it('refuses a body whose id is not the URL’s', async () => {
    const response = await h.request('PUT', '/backends/a', { body: { id: 'b', url: 'http://127.0.0.1:1' } });
    expect(response.status).toBe(400);
    expect(response.json.error.message).toBe('the body\'s id "b" is not the URL\'s "a"');
  });

  it('names the line, column and path in the body of every problem of an invalid body', async () => {
    const before = await h.read('gateway.yaml');
    const response = await h.request('PUT', '/backends/a', {
      body: '{\n  "url": "ftp://example.com",\n  "weight": 3\n}',
    });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('ValidationError');
    expect(response.json.error.message).toBe('the request body is invalid');
    expect(details(response)).toEqual([
      'request body:2:3: url: must be an http:// or https:// URL, got "ftp://example.com"',
      'request body:3:3: weight: unknown key "weight"',
    ]);
    expect(await h.read('gateway.yaml')).toBe(before);
  });

  it('refuses a body that is not JSON, or not an object', async () => {
    const notJson = await h.request('PUT', '/backends/a', { body: '{"url": ' });
    expect(notJson.status).toBe(400);
    expect(notJson.json.error.message).toMatch(/^the request body is not JSON: /);
    const array = await h.request('PUT', '/backends/a', { body: '[1]' });
    expect(array.status).toBe(400);
    expect(array.json.error.message).toBe('the request body must be a JSON object');
  });

  it('refuses a change the whole configuration does not accept, naming the file line, and writes nothing', async () => {
    const before = await h.read('gateway.yaml');
    const response = await h.request('PUT', '/users/bob', { body: { groups: ['nobody'] } });
    expect(response.status).toBe(400);
    expect(response.json.error.message).toBe('the configuration is invalid; nothing changed');
    expect(details(response)).toEqual([
      expect.stringMatching(/gateway\.yaml:\d+:\d+: users\[1\]\.groups\[0\]: no group with id "nobody"$/),
    ]);
    expect(await h.read('gateway.yaml')).toBe(before);
    expect(h.store.running().generation).toBe(1);
  });

  describe('PATCH (JSON merge patch)', () => {
    it('changes the fields named, removes those set to null, keeps the rest', async () => {
      const patched = await h.request('PATCH', '/users/alice', {
        body: { firstName: 'Alice', email: null },
      });
      expect(patched.status).toBe(200);
      expect(patched.json).toEqual({ id: 'alice', groups: ['teachers'], firstName: 'Alice' });
      expect((await h.request('GET', '/users/alice')).json).toEqual(patched.json);
    });

    it('refuses to change the id', async () => {
      const response = await h.request('PATCH', '/users/alice', { body: { id: 'bob' } });
      expect(response.status).toBe(400);
      expect(response.json.error.message).toBe('the id of an entry cannot be changed; create a new one');
    });

    it('validates the patched entry and names the problem in it', async () => {
      const response = await h.request('PATCH', '/backends/bulk', { body: { url: 'nope' } });
      expect(response.status).toBe(400);
      expect(response.json.error.message).toBe('the patched entry is invalid');
      expect(details(response)[0]).toMatch(/^patched entry:2:3: url: /);
    });

    it('refuses a "__proto__" key as unknown', async () => {
      const response = await h.request('PATCH', '/backends/bulk', {
        body: '{"__proto__": {"url": "http://x"}}',
      });
      expect(response.status).toBe(400);
      expect(details(response)).toEqual(['patched entry:3:3: __proto__: unknown key "__proto__"']);
    });

    it('keeps the comments and the style of the entry it changes', async () => {
      await h.request('PATCH', '/backends/bulk', { body: { url: 'http://127.0.0.1:8083' } });
      expect(await h.read('gateway.yaml')).toContain(
        '  - { id: bulk, url: "http://127.0.0.1:8083" } # the bulk service\n',
      );
    });
  });

  it('deletes with 204, after which the entry is gone from the list and the file', async () => {
    expect((await h.request('DELETE', '/backends/bulk')).status).toBe(204);
    expect((await h.request('GET', '/backends')).json).toEqual({ value: [], count: 0 });
    expect(await h.read('gateway.yaml')).not.toContain('id: bulk');
  });

  describe('preconditions', () => {
    it('If-Match with the current ETag applies; with a stale one answers 412 and changes nothing', async () => {
      const etag = (await h.request('GET', '/backends/bulk')).headers.get('etag')!;
      const first = await h.request('PUT', '/backends/bulk', {
        body: { url: 'http://127.0.0.1:8090' },
        headers: { 'if-match': etag },
      });
      expect(first.status).toBe(200);
      const stale = await h.request('PUT', '/backends/bulk', {
        body: { url: 'http://127.0.0.1:8091' },
        headers: { 'if-match': etag },
      });
      expect(stale.status).toBe(412);
      expect(stale.json.error.code).toBe('PreconditionFailed');
      expect(
        (await h.request('PATCH', '/backends/bulk', { body: {}, headers: { 'if-match': etag } })).status,
      ).toBe(412);
      expect((await h.request('DELETE', '/backends/bulk', { headers: { 'if-match': etag } })).status).toBe(
        412,
      );
      expect((await h.request('GET', '/backends/bulk')).json.url).toBe('http://127.0.0.1:8090');
      const current = first.headers.get('etag')!;
      expect(
        (await h.request('DELETE', '/backends/bulk', { headers: { 'if-match': `"x", ${current}` } })).status,
      ).toBe(204);
    });

    it('If-Match on an entry that does not exist answers 412, even with *', async () => {
      for (const tag of ['*', '"abc"']) {
        const response = await h.request('PUT', '/backends/new', {
          body: { url: 'http://127.0.0.1:1' },
          headers: { 'if-match': tag },
        });
        expect(response.status).toBe(412);
      }
      expect((await h.request('GET', '/backends/new')).status).toBe(404);
    });

    it('If-None-Match: * creates only', async () => {
      const existing = await h.request('PUT', '/backends/bulk', {
        body: { url: 'http://127.0.0.1:1' },
        headers: { 'if-none-match': '*' },
      });
      expect(existing.status).toBe(412);
      expect(existing.json.error.message).toBe('If-None-Match: *: the entry exists already');
      const created = await h.request('PUT', '/backends/fresh', {
        body: { url: 'http://127.0.0.1:1' },
        headers: { 'if-none-match': '*' },
      });
      expect(created.status).toBe(201);
    });
  });

  it('applies concurrent changes one after the other, each on what the previous left', async () => {
    const names = ['b1', 'b2', 'b3', 'b4'];
    const answers = await Promise.all(
      names.map((name, index) =>
        h.request('PUT', `/backends/${name}`, { body: { url: `http://127.0.0.1:${9000 + index}` } }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
    expect((await h.request('GET', '/backends')).json.value.map((b: { id: string }) => b.id).sort()).toEqual([
      'b1',
      'b2',
      'b3',
      'b4',
      'bulk',
    ]);
    expect(h.store.running().generation).toBe(5);
  });
});

describe('request handling', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('answers 415 to a body of another media type', async () => {
    // What a form can send is refused for every write (write-guard.ts), before the resource reads the body.
    const response = await h.request('PUT', '/backends/a', {
      type: 'text/plain',
      body: '{"url":"http://b"}',
    });
    expect(response.status).toBe(415);
    expect(response.json.error).toEqual({
      code: 'UnsupportedMediaType',
      message: 'a write must carry JSON, XML or YAML, got text/plain',
    });
    // Another of those the guard lets through, but not what this resource takes: the resource says what it takes.
    const xml = await h.request('PUT', '/backends/a', { type: 'application/xml', body: '<url/>' });
    expect(xml.status).toBe(415);
    expect(xml.json.error).toEqual({
      code: 'UnsupportedMediaType',
      message: 'the body must be application/json, got application/xml',
    });
  });

  it('answers 413 to a body over 4 MiB', async () => {
    const big = JSON.stringify({ url: 'http://127.0.0.1:1', pad: 'x'.repeat(4 * 1024 * 1024) });
    const response = await h.request('PUT', '/backends/a', { body: big });
    expect(response.status).toBe(413);
    expect(response.json.error.code).toBe('PayloadTooLarge');
  });

  it('answers 405 to a method the resource does not take, and 404 to an unknown path', async () => {
    const wrong = await h.request('POST', '/apis/courses', { body: {} });
    expect(wrong.status).toBe(405);
    expect(wrong.json.error.code).toBe('MethodNotAllowed');
    expect(wrong.headers.get('allow')).toContain('PUT');
    const unknown = await h.request('GET', '/nothing/here');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({
      error: { code: 'ResourceNotFound', message: 'no resource at /nothing/here' },
    });
  });

  it('describes itself at /', async () => {
    const index = await h.request('GET', '/');
    expect(index.json).toEqual({
      generation: 1,
      resources: [
        'apis',
        'operations',
        'products',
        'subscriptions',
        'users',
        'groups',
        'namedValues',
        'backends',
        'policies',
        'configuration',
      ],
    });
  });

  it('refuses (409) a change while the files on disk are not what runs', async () => {
    const { writeFile } = await import('node:fs/promises');
    const edited = `${await h.read('gateway.yaml')}# an edit by hand\n`;
    await writeFile(h.store.path('gateway.yaml'), edited);
    const response = await h.request('PUT', '/backends/a', { body: { url: 'http://127.0.0.1:1' } });
    expect(response.status).toBe(409);
    expect(response.json.error.code).toBe('Conflict');
    expect(await h.read('gateway.yaml')).toBe(edited);
  });
});

describe('mergePatch (RFC 7396)', () => {
  it('follows the RFC’s examples', () => {
    expect(mergePatch({ a: 'b' }, { a: 'c' })).toEqual({ a: 'c' });
    expect(mergePatch({ a: 'b' }, { b: 'c' })).toEqual({ a: 'b', b: 'c' });
    expect(mergePatch({ a: 'b' }, { a: null })).toEqual({});
    expect(mergePatch({ a: [{ b: 'c' }] }, { a: [1] })).toEqual({ a: [1] });
    expect(mergePatch({ a: { b: 'c' } }, { a: { b: 'd', c: null } })).toEqual({ a: { b: 'd' } });
    expect(mergePatch(['a'], { a: 'b' })).toEqual({ a: 'b' });
    expect(mergePatch({ a: 'foo' }, null)).toBe(null);
  });

  it('treats "__proto__" in a patch as an ordinary key, never as the prototype', () => {
    const merged = mergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect((merged as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(merged)).toEqual(['__proto__']);
  });
});
