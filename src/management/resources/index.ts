import type { ManagementResource } from '../resource.js';
import { apis } from './apis.js';
import { backends } from './backends.js';
import { configuration } from './configuration.js';
import { groups } from './groups.js';
import { namedValues } from './named-values.js';
import { operations } from './operations.js';
import { policies } from './policies.js';
import { products } from './products.js';
import { subscriptions } from './subscriptions.js';
import { users } from './users.js';

/** Everything the management API manages; each entry adds its own routes. */
export const managementResources: readonly ManagementResource[] = [
  apis,
  operations,
  products,
  subscriptions,
  users,
  groups,
  namedValues,
  backends,
  policies,
  configuration,
];
