import { userSchema } from '../../config/schema.js';
import { collectionResource } from '../collection.js';
import { deleteOwnedSubscriptions } from './references.js';

/** `/users/{userId}`: a developer account, owner of subscriptions. */
export const users = collectionResource({
  name: 'users',
  route: '/users',
  idParam: 'userId',
  noun: 'user',
  shape: 'list',
  locate: () => ['users'],
  schema: userSchema.partial({ id: true }),
  beforeDelete(document, id, ctx) {
    deleteOwnedSubscriptions(document, ctx, `user "${id}"`, (s) => s.user === id);
  },
});
