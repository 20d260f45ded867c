import type { ResourceKind } from '../context.js';
import { apis } from './apis.js';
import { backends } from './backends.js';
import { fragments } from './fragments.js';
import { globalPolicy } from './global-policy.js';
import { groups } from './groups.js';
import { namedValues } from './named-values.js';
import { notCarried } from './not-carried.js';
import { products } from './products.js';
import { subscriptions } from './subscriptions.js';
import { users } from './users.js';
import { versionSets } from './version-sets.js';

/**
 * Every kind of resource, in the order an import needs: what a later kind refers to comes first (version sets
 * before the APIs in them, APIs before products, groups before users, products and users before subscriptions).
 */
export const resourceKinds: readonly ResourceKind[] = [
  namedValues,
  globalPolicy,
  fragments,
  backends,
  versionSets,
  apis,
  products,
  groups,
  users,
  subscriptions,
  notCarried,
];
