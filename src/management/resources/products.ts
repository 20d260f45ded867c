import { productSchema } from '../../config/schema.js';
import { collectionResource, respond } from '../collection.js';
import { ManagementError } from '../errors.js';
import { deleteOwnedSubscriptions, indexOf, scopeOf } from './references.js';

/**
 * `/products/{productId}`: a product (its APIs, whether it needs a subscription, its policy). Its APIs can also be
 * linked one by one, as API Management does: `PUT` / `DELETE /products/{productId}/apis/{apiId}`.
 */
export const products = collectionResource({
  name: 'products',
  route: '/products',
  idParam: 'productId',
  noun: 'product',
  shape: 'list',
  locate: () => ['products'],
  schema: productSchema.partial({ id: true }),
  beforeDelete(document, id, ctx) {
    deleteOwnedSubscriptions(document, ctx, `product "${id}"`, (s) => scopeOf(s)?.product === id);
  },
  extend(router, api) {
    const members = (product: Record<string, unknown>) =>
      Array.isArray(product.apis) ? (product.apis as string[]) : [];

    router.get('/products/:productId/apis', (ctx) => {
      const { document } = api.read();
      const index = indexOf(document, ['products'], ctx.params.productId!, 'product');
      const value = members(document.list(['products'])[index]!).map((id) => ({ id }));
      ctx.body = { value, count: value.length };
    });

    router.put('/products/:productId/apis/:apiId', async (ctx) => {
      const { productId, apiId } = ctx.params as { productId: string; apiId: string };
      const created = await api.change(ctx, (document) => {
        const index = indexOf(document, ['products'], productId, 'product');
        indexOf(document, ['apis'], apiId, 'API');
        const current = members(document.list(['products'])[index]!);
        if (current.includes(apiId)) return false;
        document.set(['products', index, 'apis'], [...current, apiId]);
        return true;
      });
      respond(ctx, created ? 201 : 200, { id: apiId });
    });

    router.delete('/products/:productId/apis/:apiId', async (ctx) => {
      const { productId, apiId } = ctx.params as { productId: string; apiId: string };
      await api.change(ctx, (document) => {
        const index = indexOf(document, ['products'], productId, 'product');
        const current = members(document.list(['products'])[index]!);
        if (!current.includes(apiId)) {
          throw new ManagementError(
            404,
            'ResourceNotFound',
            `API "${apiId}" is not in product "${productId}"`,
          );
        }
        document.set(
          ['products', index, 'apis'],
          current.filter((id) => id !== apiId),
        );
      });
      ctx.status = 204;
    });
  },
});
