import { apiSchema } from '../../config/schema.js';
import { collectionResource } from '../collection.js';
import { deleteOwnedSubscriptions, scopeOf } from './references.js';

/**
 * `/apis/{apiId}`: an API as `apis[]` of the configuration writes it (with its operations and policy). Deleting one
 * takes it out of the products that list it.
 */
export const apis = collectionResource({
  name: 'apis',
  route: '/apis',
  idParam: 'apiId',
  noun: 'API',
  shape: 'list',
  locate: () => ['apis'],
  schema: apiSchema.partial({ id: true }),
  beforeDelete(document, id, ctx) {
    deleteOwnedSubscriptions(document, ctx, `API "${id}"`, (s) => scopeOf(s)?.api === id);
    document.list(['products']).forEach((product, index) => {
      const members = Array.isArray(product.apis) ? (product.apis as unknown[]) : [];
      if (members.includes(id)) {
        document.set(
          ['products', index, 'apis'],
          members.filter((member) => member !== id),
        );
      }
    });
  },
});
