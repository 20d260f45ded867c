import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ManagementHarness, startManagement } from './harness.js';

describe('/products', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('lists a product’s APIs', async () => {
    expect((await h.request('GET', '/products/internal/apis')).json).toEqual({
      value: [{ id: 'courses' }, { id: 'staff' }],
      count: 2,
    });
    expect((await h.request('GET', '/products/nope/apis')).status).toBe(404);
  });

  it('links an API with PUT /products/{p}/apis/{a}: 201, then 200 when it is there already', async () => {
    const linked = await h.request('PUT', '/products/starter/apis/staff');
    expect(linked.status).toBe(201);
    expect(linked.json).toEqual({ id: 'staff' });
    expect((await h.request('GET', '/products/starter')).json.apis).toEqual(['courses', 'staff']);
    expect(h.store.running().config.products[0]!.apis).toEqual(['courses', 'staff']);
    expect(await h.read('gateway.yaml')).toContain(
      '  - { id: starter, name: Starter, apis: [ courses, staff ] } # keep this product\n',
    );
    const again = await h.request('PUT', '/products/starter/apis/staff');
    expect(again.status).toBe(200);
    expect((await h.request('GET', '/products/starter')).json.apis).toEqual(['courses', 'staff']);
    expect(h.store.running().generation).toBe(3);
  });

  it('refuses to link an API or product that does not exist', async () => {
    const noApi = await h.request('PUT', '/products/starter/apis/nope');
    expect(noApi.status).toBe(404);
    expect(noApi.json.error.message).toBe('API "nope" not found');
    const noProduct = await h.request('PUT', '/products/nope/apis/courses');
    expect(noProduct.status).toBe(404);
    expect(noProduct.json.error.message).toBe('product "nope" not found');
  });

  it('unlinks an API with DELETE /products/{p}/apis/{a}, then 404', async () => {
    expect((await h.request('DELETE', '/products/internal/apis/staff')).status).toBe(204);
    expect((await h.request('GET', '/products/internal')).json.apis).toEqual(['courses']);
    const again = await h.request('DELETE', '/products/internal/apis/staff');
    expect(again.status).toBe(404);
    expect(again.json.error.message).toBe('API "staff" is not in product "internal"');
  });

  it('refuses a product naming an API that does not exist', async () => {
    const response = await h.request('PUT', '/products/gold', { body: { apis: ['nope'] } });
    expect(response.status).toBe(400);
    expect(response.json.error.details[0].message).toMatch(/products\[2\]\.apis\[0\]/);
  });

  it('refuses to delete a product with subscriptions unless asked to delete them too', async () => {
    const refused = await h.request('DELETE', '/products/starter');
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toContain('product "starter" has 1 subscription(s) (alice-starter)');
    expect((await h.request('DELETE', '/products/starter?deleteSubscriptions=true')).status).toBe(204);
    expect((await h.request('GET', '/subscriptions/alice-starter')).status).toBe(404);
    expect((await h.request('GET', '/products')).json.value.map((p: { id: string }) => p.id)).toEqual([
      'internal',
    ]);
  });

  it('deletes a product without subscriptions', async () => {
    expect((await h.request('DELETE', '/products/internal')).status).toBe(204);
    expect(await h.read('gateway.yaml')).not.toContain('id: internal');
  });
});
