import { backendSchema } from '../../config/schema.js';
import { collectionResource } from '../collection.js';

/** `/backends/{backendId}`: a named backend, what `set-backend-service backend-id="…"` names. */
export const backends = collectionResource({
  name: 'backends',
  route: '/backends',
  idParam: 'backendId',
  noun: 'backend',
  shape: 'list',
  locate: () => ['backends'],
  schema: backendSchema.partial({ id: true }),
});
