import { operationSchema } from '../../config/schema.js';
import { collectionResource } from '../collection.js';
import { indexOf, operationId } from './references.js';

/**
 * `/apis/{apiId}/operations/{operationId}`: the operations the configuration lists for an API (those a definition
 * file publishes are changed in that file; listing one here with the same id overrides it). An operation without
 * an `id` is addressed as the gateway names it: `METHOD /template`.
 */
export const operations = collectionResource({
  name: 'operations',
  route: '/apis/:apiId/operations',
  idParam: 'operationId',
  noun: 'operation',
  shape: 'list',
  locate: (document, params) => ['apis', indexOf(document, ['apis'], params.apiId!, 'API'), 'operations'],
  schema: operationSchema,
  idOf: operationId,
});
