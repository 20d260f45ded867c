import { groupSchema } from '../../config/schema.js';
import { collectionResource } from '../collection.js';

/** `/groups/{groupId}`: a group of developers (`vary-by-developer-groups`). Deleting one takes its members out. */
export const groups = collectionResource({
  name: 'groups',
  route: '/groups',
  idParam: 'groupId',
  noun: 'group',
  shape: 'list',
  locate: () => ['groups'],
  schema: groupSchema.partial({ id: true }),
  beforeDelete(document, id) {
    document.list(['users']).forEach((user, index) => {
      const groups = Array.isArray(user.groups) ? (user.groups as unknown[]) : [];
      if (groups.includes(id)) {
        document.set(
          ['users', index, 'groups'],
          groups.filter((group) => group !== id),
        );
      }
    });
  },
});
