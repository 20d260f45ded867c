/**
 * Elements of the API Management reference that Portcullis knows by name but does not run, each with the reason. A
 * document that uses one is rejected with that reason (`"<name>" is not implemented: …`, or the Azure service it
 * needs), never silently ignored. When an element is implemented it moves to its own file and leaves this table.
 * docs/policy-coverage.md lists these rows beside the reference's index (src/policy/coverage.ts).
 */
import type { DeclaredElement } from '../element.js';
import { ALL_SCOPES, GPAO, type Scope, SECTIONS, type Section } from '../schema.js';

/** One letter per section, in the schema's order, so a row reads like the reference's table. */
const [I, B, O, E] = SECTIONS;
const ALL = ALL_SCOPES;

const missing = (
  name: string,
  sections: readonly Section[],
  scopes: readonly Scope[],
  reason: string,
): DeclaredElement => ({ name, sections, scopes, unavailable: { missing: reason } });
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

const GRAPHQL =
  'a GraphQL resolver policy: Portcullis publishes GraphQL pass-through APIs only, not synthetic ones whose fields policies resolve';
const DAPR =
  'a self-hosted-gateway policy that calls a Dapr sidecar; Portcullis has no Dapr integration (issue #39)';

export const DECLARED_ELEMENTS: readonly DeclaredElement[] = [
  // Content validation
  missing(
    'validate-odata-request',
    [I],
    ['global', 'workspace', 'product', 'api'],
    'Portcullis imports no OData definitions (CSDL), so there is no OData schema to validate against (issue #39)',
  ),
  // Routing
  missing(
    'proxy',
    [I],
    GPAO,
    'the forwarded request is sent by Envoy, whose route takes no HTTP proxy; send-request and send-one-way-request take <proxy>',
  ),
  // Transformation
  // Cross-domain
  missing(
    'cross-domain',
    [I],
    ['global'],
    'serves the crossdomain.xml of Adobe Flash and Silverlight clients, which browsers no longer run (issue #39)',
  ),
  // Integration
  azure('send-service-bus-message', [I, O, E], GPAO, 'Service Bus'),
  missing('publish-to-dapr', [I, B, O, E], ALL, DAPR),
  missing('invoke-dapr-binding', [I, B, O, E], ALL, DAPR),
  // GraphQL resolvers
  missing('http-data-source', [], [], GRAPHQL),
  missing('sql-data-source', [], [], GRAPHQL),
  missing('cosmosdb-data-source', [], [], GRAPHQL),
  missing('publish-event', [], [], GRAPHQL),
];
