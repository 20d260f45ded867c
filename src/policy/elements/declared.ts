/**
 * Elements of the API Management reference that Portcullis knows by name but does not run. A document that
 * uses one is rejected with `"<name>" is not implemented yet` (or the Azure service it needs), never silently
 * ignored. When an element is implemented it moves to its own file and leaves this table.
 */
import type { DeclaredElement } from '../element.js';
import type { Scope, Section } from '../schema.js';

const I: Section = 'inbound';
const B: Section = 'backend';
const O: Section = 'outbound';
const E: Section = 'on-error';
const ALL: Scope[] = ['global', 'workspace', 'product', 'api', 'operation'];
const GPAO: Scope[] = ['global', 'product', 'api', 'operation'];

const todo = (name: string, sections: Section[], scopes: Scope[]): DeclaredElement => ({
  name,
  sections,
  scopes,
  unavailable: 'not-implemented',
});
const azure = (name: string, sections: Section[], scopes: Scope[], service: string): DeclaredElement => ({
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
  todo('xsl-transform', [I, O], GPAO),
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
