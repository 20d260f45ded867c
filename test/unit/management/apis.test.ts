import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { details, type ManagementHarness, startManagement } from './harness.js';

describe('/apis', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('creates an API that GET and the export then show, leaving the operator’s comments in the file', async () => {
    const body = {
      name: 'Reports',
      urlSuffix: 'reports',
      serviceUrl: 'http://127.0.0.1:8090',
      operations: [{ id: 'daily', method: 'GET', urlTemplate: '/daily' }],
    };
    const created = await h.request('PUT', '/apis/reports', { body });
    expect(created.status).toBe(201);
    expect((await h.request('GET', '/apis/reports')).json).toEqual({ id: 'reports', ...body });
    expect((await h.request('GET', '/apis')).json.value.map((api: { id: string }) => api.id)).toEqual([
      'courses',
      'staff',
      'reports',
    ]);
    const exported = await h.request('GET', '/configuration', { headers: { accept: 'application/json' } });
    expect(exported.json.apis[2]).toEqual({ id: 'reports', ...body });
    expect(h.store.running().config.apis.map((api) => api.id)).toEqual(['courses', 'staff', 'reports']);

    const file = await h.read('gateway.yaml');
    for (const comment of [
      "# The operator's own gateway file.",
      '# Named values: one plain, one secret.',
      '# the bulk service',
      '  # The course catalogue.',
      '# keep this product',
    ]) {
      expect(file).toContain(comment);
    }
    expect(file).toContain(
      '  - id: reports\n    name: Reports\n    urlSuffix: reports\n    serviceUrl: http://127.0.0.1:8090\n    operations:\n      - id: daily\n',
    );
  });

  it('shows the API as the configuration writes it, policy file name included', async () => {
    const api = await h.request('GET', '/apis/courses');
    expect(api.json).toMatchObject({ id: 'courses', policy: 'policies/courses.xml' });
    expect(api.json.operations).toHaveLength(2);
  });

  it('writes a multi-line inline policy in a body as a block scalar', async () => {
    const policy = '<policies>\n  <inbound>\n    <base />\n  </inbound>\n</policies>';
    const response = await h.request('PATCH', '/apis/staff', { body: { policy } });
    expect(response.status).toBe(200);
    expect(await h.read('gateway.yaml')).toContain(
      '    policy: |-\n      <policies>\n        <inbound>\n          <base />\n        </inbound>\n      </policies>\n',
    );
    expect((await h.request('GET', '/apis/staff/policies/policy')).text).toBe(policy);
  });

  it('refuses an invalid API with every problem located in the body', async () => {
    const before = await h.read('gateway.yaml');
    const response = await h.request('PUT', '/apis/bad', {
      body: '{\n  "urlSuffix": "/bad/",\n  "serviceUrl": "ftp://x",\n  "colour": 1\n}',
    });
    expect(response.status).toBe(400);
    expect(details(response)).toEqual([
      'request body:2:3: urlSuffix: must be path segments without leading or trailing "/", e.g. "courses" or "v1/courses", got "/bad/"',
      'request body:3:3: serviceUrl: must be an http:// or https:// URL, got "ftp://x"',
      'request body:4:3: colour: unknown key "colour"',
    ]);
    expect(await h.read('gateway.yaml')).toBe(before);
  });

  it('refuses an API whose URL suffix another API has', async () => {
    const response = await h.request('PUT', '/apis/copy', {
      body: { urlSuffix: 'courses', serviceUrl: 'http://127.0.0.1:1' },
    });
    expect(response.status).toBe(400);
    expect(details(response)).toEqual([
      expect.stringMatching(
        /gateway\.yaml:\d+:\d+: apis\[2\]\.urlSuffix: URL suffix "courses" is already used by apis\[0\] on the same hosts \(only versions of one header- or query-versioned set share a suffix\)$/,
      ),
    ]);
    expect((await h.request('GET', '/apis/copy')).status).toBe(404);
  });

  describe('DELETE', () => {
    it('takes the API out of every product that lists it', async () => {
      expect((await h.request('DELETE', '/apis/courses')).status).toBe(204);
      expect((await h.request('GET', '/apis/courses')).status).toBe(404);
      expect((await h.request('GET', '/products/starter')).json.apis).toEqual([]);
      expect((await h.request('GET', '/products/internal')).json.apis).toEqual(['staff']);
      // The product's flow style and comment stay.
      expect(await h.read('gateway.yaml')).toContain(
        '  - { id: starter, name: Starter, apis: [] } # keep this product\n',
      );
    });

    it('refuses (409) while subscriptions are scoped to the API, naming them, and changes nothing', async () => {
      const before = await h.read('gateway.yaml');
      const refused = await h.request('DELETE', '/apis/staff');
      expect(refused.status).toBe(409);
      expect(refused.json.error).toEqual({
        code: 'Conflict',
        message:
          'API "staff" has 1 subscription(s) (staff-direct); delete them first or add ?deleteSubscriptions=true',
      });
      expect(await h.read('gateway.yaml')).toBe(before);
    });

    it('deletes the API’s subscriptions too with ?deleteSubscriptions=true', async () => {
      expect((await h.request('DELETE', '/apis/staff?deleteSubscriptions=true')).status).toBe(204);
      expect((await h.request('GET', '/subscriptions')).json.value.map((s: { id: string }) => s.id)).toEqual([
        'alice-starter',
      ]);
      expect((await h.request('GET', '/products/internal')).json.apis).toEqual(['courses']);
      expect(h.store.running().config.subscriptions.map((s) => s.id)).toEqual(['alice-starter']);
    });
  });
});
