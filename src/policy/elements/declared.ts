/**
 * Elements of the API Management reference that Portcullis knows by name but does not run. A document that
 * uses one is rejected with `"<name>" is not implemented yet` (or the Azure service it needs), never silently
 * ignored. When an element is implemented it moves to its own file and leaves this table.
 */
import type { DeclaredElement } from '../element.js';
import { ALL_SCOPES, GPAO, type Scope, SECTIONS, type Section } from '../schema.js';

/** One letter per section, in the schema's order, so a row reads like the reference's table. */
const [I, B, O, E] = SECTIONS;
const ALL = ALL_SCOPES;

const todo = (name: string, sections: readonly Section[], scopes: readonly Scope[]): DeclaredElement => ({
  name,
  sections,
  scopes,
  unavailable: 'not-implemented',
});
const azure = (
  name: string,
  sections: readonly Section[],
  scopes: readonly Scope[],
  service: string,
): DeclaredElement => ({
  name,
  sections,
  scopes,
  unavailable: { azure: service },
});

export const DECLARED_ELEMENTS: readonly DeclaredElement[] = [
  // Authentication and access restriction
  // Content validation
  todo('validate-content', [I, O, E], GPAO),
  todo('validate-parameters', [I], ALL),
  todo('validate-headers', [O, E], ALL),
  todo('validate-status-code', [O, E], GPAO),
  todo('validate-odata-request', [I], ['global', 'workspace', 'product', 'api']),
  todo('validate-graphql-request', [I], ['global', 'workspace', 'product', 'api']),
  // Routing
  todo('proxy', [I], GPAO),
  // Transformation
  // Cross-domain
  todo('cross-domain', [I], ['global']),
  // Integration
  azure('send-service-bus-message', [I, O, E], GPAO, 'Service Bus'),
  todo('publish-to-dapr', [I, B, O, E], ALL),
  todo('invoke-dapr-binding', [I, B, O, E], ALL),
  // GraphQL resolvers
  todo('http-data-source', [], []),
  todo('sql-data-source', [], []),
  todo('cosmosdb-data-source', [], []),
  todo('publish-event', [], []),
];
