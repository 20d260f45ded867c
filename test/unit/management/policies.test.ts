import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiPolicy, details, type ManagementHarness, startManagement } from './harness.js';

const xml = { type: 'application/vnd.ms-azure-apim.policy.raw+xml' };
const valid =
  '<policies>\n  <inbound>\n    <set-header name="x-global" exists-action="override"><value>1</value></set-header>\n  </inbound>\n</policies>\n';
/** `set-heder` at line 3, column 5. */
const misspelt = '<policies>\n  <inbound>\n    <set-heder name="x" />\n  </inbound>\n</policies>\n';
const operationPolicy = `/apis/courses/operations/${encodeURIComponent('GET /api/Course/{id}')}/policies/policy`;

describe('policies as raw XML', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('reads a policy kept in its own file, as XML with an ETag', async () => {
    const response = await h.request('GET', '/apis/courses/policies/policy');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(response.headers.get('etag')).toMatch(/^"/);
    expect(response.text).toBe(apiPolicy);
  });

  it('writes a changed policy into the file the scope names, leaving the configuration file as it was', async () => {
    const config = await h.read('gateway.yaml');
    const changed = apiPolicy.replace('<value>courses</value>', '<value>courses-v2</value>');
    const response = await h.request('PUT', '/apis/courses/policies/policy', { ...xml, body: changed });
    expect(response.status).toBe(200);
    expect(await h.read('policies/courses.xml')).toBe(changed);
    expect(await h.read('gateway.yaml')).toBe(config);
    expect((await h.request('GET', '/apis/courses/policies/policy')).text).toBe(changed);
    expect(h.store.running().generation).toBe(2);
  });

  it('writes a new policy inline as a block scalar (201), exactly as sent', async () => {
    const response = await h.request('PUT', '/policies/policy', { type: 'application/xml', body: valid });
    expect(response.status).toBe(201);
    expect(await h.read('gateway.yaml')).toContain(
      'policy: |\n  <policies>\n    <inbound>\n      <set-header name="x-global"',
    );
    expect((await h.request('GET', '/policies/policy')).text).toBe(valid);
  });

  it('refuses a policy with an unknown element, naming its line and column in the XML sent; files unchanged', async () => {
    const config = await h.read('gateway.yaml');
    const file = await h.read('policies/courses.xml');
    const inFile = await h.request('PUT', '/apis/courses/policies/policy', { ...xml, body: misspelt });
    expect(inFile.status).toBe(400);
    expect(details(inFile)).toEqual([
      `${h.store.path('policies/courses.xml')}:3:5: policies/inbound/set-heder[1]: unknown policy element <set-heder> (did you mean "set-header"?)`,
    ]);
    const inline = await h.request('PUT', '/policies/policy', { ...xml, body: misspelt });
    expect(inline.status).toBe(400);
    expect(details(inline)).toEqual([
      `${h.store.file} (policy):3:5: policies/inbound/set-heder[1]: unknown policy element <set-heder> (did you mean "set-header"?)`,
    ]);
    expect(await h.read('gateway.yaml')).toBe(config);
    expect(await h.read('policies/courses.xml')).toBe(file);
    expect(h.store.running().generation).toBe(1);
  });

  it('refuses XML that is not well-formed, with the line and column', async () => {
    const response = await h.request('PUT', '/products/starter/policies/policy', {
      ...xml,
      body: '<policies>\n  <inbound>\n    <set-header name="x">\n  </inbound>\n</policies>',
    });
    expect(response.status).toBe(400);
    expect(details(response)).toEqual([
      expect.stringMatching(/gateway\.yaml \(products\[0\]\.policy\):4:\d+: /),
    ]);
  });

  it('refuses an empty document and a body that is not XML', async () => {
    expect((await h.request('PUT', '/policies/policy', { ...xml, body: '  \n' })).status).toBe(400);
    const json = await h.request('PUT', '/policies/policy', { body: { policies: {} } });
    expect(json.status).toBe(415);
    expect(json.json.error.message).toBe(
      'the body must be application/vnd.ms-azure-apim.policy.raw+xml or application/xml or text/xml, got application/json',
    );
  });

  it('sets an operation’s policy, addressing it by METHOD /template', async () => {
    const policy = '<policies>\n  <inbound>\n    <base />\n  </inbound>\n</policies>';
    expect((await h.request('GET', operationPolicy)).status).toBe(404);
    expect((await h.request('PUT', operationPolicy, { ...xml, body: policy })).status).toBe(201);
    expect((await h.request('GET', operationPolicy)).text).toBe(policy);
    expect(h.store.running().config.apis[0]!.operations[1]!.policy).toBe(policy);
    expect(await h.read('gateway.yaml')).not.toContain('id: GET');
    const missing = await h.request('PUT', '/apis/courses/operations/nope/policies/policy', {
      ...xml,
      body: policy,
    });
    expect(missing.status).toBe(404);
  });

  it('sets a product’s policy', async () => {
    const policy = '<policies>\n  <inbound>\n    <base />\n  </inbound>\n</policies>';
    expect(
      (await h.request('PUT', '/products/internal/policies/policy', { ...xml, body: policy })).status,
    ).toBe(201);
    expect(h.store.running().config.products[1]!.policy).toBe(policy);
    expect((await h.request('PUT', '/products/nope/policies/policy', { ...xml, body: policy })).status).toBe(
      404,
    );
  });

  it('honours If-Match and If-None-Match: *', async () => {
    const etag = (await h.request('GET', '/apis/courses/policies/policy')).headers.get('etag')!;
    const exists = await h.request('PUT', '/apis/courses/policies/policy', {
      ...xml,
      body: apiPolicy,
      headers: { 'if-none-match': '*' },
    });
    expect(exists.status).toBe(412);
    const changed = apiPolicy.replace('courses</value>', 'v2</value>');
    const first = await h.request('PUT', '/apis/courses/policies/policy', {
      ...xml,
      body: changed,
      headers: { 'if-match': etag },
    });
    expect(first.status).toBe(200);
    const stale = await h.request('PUT', '/apis/courses/policies/policy', {
      ...xml,
      body: apiPolicy,
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect(await h.read('policies/courses.xml')).toBe(changed);
    expect(
      (await h.request('DELETE', '/apis/courses/policies/policy', { headers: { 'if-match': etag } })).status,
    ).toBe(412);
  });

  it('deletes a scope’s policy: the configuration no longer names it, its file stays on disk', async () => {
    expect((await h.request('DELETE', '/apis/courses/policies/policy')).status).toBe(204);
    expect(h.store.running().config.apis[0]!.policy).toBeUndefined();
    expect(await h.read('gateway.yaml')).not.toContain('policies/courses.xml');
    expect(await h.read('policies/courses.xml')).toBe(apiPolicy);
    expect((await h.request('GET', '/apis/courses/policies/policy')).status).toBe(404);
    const again = await h.request('DELETE', '/apis/courses/policies/policy');
    expect(again.status).toBe(404);
    expect(again.json.error.message).toBe('the policy of API "courses" is not set');
  });

  describe('policy fragments', () => {
    const fragment =
      '<fragment>\n  <set-header name="x-f" exists-action="override"><value>f</value></set-header>\n</fragment>\n';

    it('lists, reads, creates and deletes fragments', async () => {
      expect((await h.request('GET', '/policyFragments')).json).toEqual({
        value: [{ id: 'stamp' }],
        count: 1,
      });
      expect((await h.request('GET', '/policyFragments/stamp')).text).toContain('<set-header name="x-stamp"');
      expect((await h.request('PUT', '/policyFragments/extra', { ...xml, body: fragment })).status).toBe(201);
      expect(Object.keys(h.store.running().config.fragments)).toEqual(['stamp', 'extra']);
      expect((await h.request('DELETE', '/policyFragments/extra')).status).toBe(204);
      expect((await h.request('GET', '/policyFragments/extra')).status).toBe(404);
    });

    it('refuses to delete a fragment a policy includes', async () => {
      const including =
        '<policies>\n  <inbound>\n    <include-fragment fragment-id="stamp" />\n  </inbound>\n</policies>\n';
      expect((await h.request('PUT', '/policies/policy', { ...xml, body: including })).status).toBe(201);
      const response = await h.request('DELETE', '/policyFragments/stamp');
      expect(response.status).toBe(400);
      expect(details(response)[0]).toMatch(/gateway\.yaml \(policy\):3:5: .*stamp/);
      expect(Object.keys(h.store.running().config.fragments)).toEqual(['stamp']);
    });
  });
});
