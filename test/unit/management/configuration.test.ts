import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { apiPolicy, details, type ManagementHarness, startManagement } from './harness.js';

const json = { accept: 'application/json' };

describe('/configuration (export and import)', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('exports YAML by default, comments kept and every policy inline, never cached', async () => {
    const exported = await h.request('GET', '/configuration');
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    expect(exported.headers.get('cache-control')).toBe('no-store');
    expect(exported.text).toContain('# The course catalogue.');
    expect(parse(exported.text).apis[0].policy).toBe(apiPolicy);
    // The export is for restoring the gateway: it carries its credentials (hence admin-only and no-store).
    expect(exported.text).toContain('alice-primary-key-0001');
    expect(exported.text).toContain('very-secret-customer-key');
  });

  it('exports JSON with Accept: application/json, with the same ETag as the YAML', async () => {
    const yaml = await h.request('GET', '/configuration');
    const exported = await h.request('GET', '/configuration', { headers: json });
    expect(exported.headers.get('content-type')).toMatch(/^application\/json/);
    expect(exported.json).toEqual(parse(yaml.text));
    expect(exported.headers.get('etag')).toBe(yaml.headers.get('etag'));
  });

  it('export → import → export is identical (YAML), and the file is the text imported', async () => {
    const first = await h.request('GET', '/configuration');
    const imported = await h.request('PUT', '/configuration', { type: 'application/yaml', body: first.text });
    expect(imported.status).toBe(204);
    expect(await h.read('gateway.yaml')).toBe(first.text);
    const second = await h.request('GET', '/configuration');
    expect(second.text).toBe(first.text);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(h.store.running().generation).toBe(2);
  });

  it('export → import → export is identical (JSON)', async () => {
    const first = await h.request('GET', '/configuration', { headers: json });
    const imported = await h.request('PUT', '/configuration', { body: first.text });
    expect(imported.status).toBe(204);
    const second = await h.request('GET', '/configuration', { headers: json });
    expect(second.text).toBe(first.text);
    // Stored as YAML, the configuration file's language.
    expect(parse(await h.read('gateway.yaml'))).toEqual(first.json);
  });

  it('applies an imported change', async () => {
    const exported = parse((await h.request('GET', '/configuration')).text);
    exported.backends.push({ id: 'imported', url: 'http://127.0.0.1:9999' });
    expect((await h.request('PUT', '/configuration', { body: exported })).status).toBe(204);
    expect((await h.request('GET', '/backends/imported')).status).toBe(200);
  });

  it('refuses an invalid document whole (400, located), and changes nothing', async () => {
    const before = await h.read('gateway.yaml');
    const text = (await h.request('GET', '/configuration')).text.replace(
      'urlSuffix: staff',
      'urlSufix: staff',
    );
    const response = await h.request('PUT', '/configuration', { type: 'application/yaml', body: text });
    expect(response.status).toBe(400);
    const line = text.split('\n').findIndex((l) => l.includes('urlSufix')) + 1;
    expect(details(response)).toContain(
      `${h.store.file}:${line}:5: apis[1].urlSufix: unknown key "urlSufix"`,
    );
    expect(await h.read('gateway.yaml')).toBe(before);
    expect(h.store.running().generation).toBe(1);
  });

  it('refuses a document that is not YAML', async () => {
    const response = await h.request('PUT', '/configuration', { type: 'text/yaml', body: 'apis: [\n' });
    expect(response.status).toBe(400);
    expect(response.json.error.message).toBe('the configuration is not YAML or JSON');
    expect(details(response)[0]).toMatch(/^request body: /);
    expect((await h.request('PUT', '/configuration', { type: 'text/plain', body: 'apis: []' })).status).toBe(
      415,
    );
  });

  it('imports only over the export it was made from when If-Match says so', async () => {
    const exported = await h.request('GET', '/configuration');
    const etag = exported.headers.get('etag')!;
    await h.request('PUT', '/backends/meanwhile', { body: { url: 'http://127.0.0.1:1' } });
    const stale = await h.request('PUT', '/configuration', {
      type: 'application/yaml',
      body: exported.text,
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect((await h.request('GET', '/backends/meanwhile')).status).toBe(200);
    const current = (await h.request('GET', '/configuration')).headers.get('etag')!;
    const fresh = await h.request('PUT', '/configuration', {
      type: 'application/yaml',
      body: exported.text,
      headers: { 'if-match': current },
    });
    expect(fresh.status).toBe(204);
    expect((await h.request('GET', '/backends/meanwhile')).status).toBe(404);
  });
});
