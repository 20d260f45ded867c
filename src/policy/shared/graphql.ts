import { createRequire } from 'node:module';
/**
 * GraphQL as the gateway reads it: the schema of a GraphQL API (SDL), and a request to it — the GraphQL-over-HTTP
 * shapes, a POST whose JSON body is `{ query, operationName, variables }` or a GET with `?query=` — parsed and
 * validated against that schema by graphql-js, the reference implementation.
 *
 * graphql-js is loaded the first time a configuration has a GraphQL API, through `require`, never when an engine
 * starts without one (it is some hundred modules); it stays in node_modules (scripts/build.js `unbundled`).
 */
import type * as GraphqlJs from 'graphql';
import type {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLError,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';

const require = createRequire(import.meta.url);
let loaded: typeof GraphqlJs | undefined;
export const graphqlJs = (): typeof GraphqlJs => {
  loaded ??= require('graphql') as typeof GraphqlJs;
  return loaded;
};

/** What an operation's definition holds of a GraphQL API: its schema, built once at load. */
export interface GraphqlDefinition {
  readonly schema: GraphQLSchema;
}

/** A schema problem at a place of its SDL file (1-based line and column), or of the whole file. */
export interface SchemaProblem {
  readonly line?: number;
  readonly column?: number;
  readonly message: string;
}

/** The schema written in SDL, or every problem that keeps it from being one (syntax, then type-system rules). */
export function buildGraphqlSchema(sdl: string): GraphQLSchema | SchemaProblem[] {
  const graphql = graphqlJs();
  let document: DocumentNode;
  try {
    document = graphql.parse(sdl);
  } catch (error) {
    return [problemOf(error as GraphQLError)];
  }
  // validateSDL is graphql-js's own check of a document as a schema, with each problem's place (buildASTSchema's
  // joins the messages and drops the places).
  const { validateSDL } =
    require('graphql/validation/validate.js') as typeof import('graphql/validation/validate.js');
  const sdlErrors = validateSDL(document);
  if (sdlErrors.length > 0) return sdlErrors.map(problemOf);
  const schema = graphql.buildASTSchema(document, { assumeValidSDL: true });
  const errors = graphql.validateSchema(schema);
  return errors.length > 0 ? errors.map(problemOf) : schema;
}

function problemOf(error: GraphQLError): SchemaProblem {
  const at = error.locations?.[0];
  return at ? { line: at.line, column: at.column, message: error.message } : { message: error.message };
}

/** The schema of an introspection result (`{ data: { __schema } }` or `{ __schema }`), as SDL. */
export function sdlOfIntrospection(result: unknown): string {
  const graphql = graphqlJs();
  const record = result as { data?: unknown; __schema?: unknown };
  const data = (record.__schema === undefined ? record.data : record) as GraphqlJs.IntrospectionQuery;
  return graphql.printSchema(graphql.buildClientSchema(data));
}

/** A GraphQL request as the client sent it. */
export interface GraphqlRequest {
  readonly query: string;
  readonly operationName: string | undefined;
  readonly variables: unknown;
  /** Where the query travelled: rewriting it (a removed field) writes it back there. */
  readonly carrier: 'body' | 'query-string';
}

/** Why a request is not a GraphQL request at all (no query where one must be). */
export class NotGraphqlRequest extends Error {
  override readonly name = 'NotGraphqlRequest';
}

/** The GraphQL request of a POST's JSON body or a GET's query string. */
export function graphqlRequestOf(
  method: string,
  query: (name: string) => string | undefined,
  body: () => string,
): GraphqlRequest {
  if (method.toUpperCase() === 'GET') {
    const text = query('query');
    if (text === undefined) throw new NotGraphqlRequest('A GET request must carry the query in ?query=.');
    const variables = query('variables');
    let parsed: unknown;
    try {
      parsed = variables === undefined ? undefined : JSON.parse(variables);
    } catch {
      throw new NotGraphqlRequest('The variables parameter is not JSON.');
    }
    return { query: text, operationName: query('operationName'), variables: parsed, carrier: 'query-string' };
  }
  let json: unknown;
  try {
    json = JSON.parse(body());
  } catch {
    throw new NotGraphqlRequest('The request body is not JSON.');
  }
  const record = json as Record<string, unknown> | null;
  if (record === null || typeof record !== 'object' || typeof record.query !== 'string')
    throw new NotGraphqlRequest('The request body must be a JSON object with a "query" string.');
  const operationName = typeof record.operationName === 'string' ? record.operationName : undefined;
  return { query: record.query, operationName, variables: record.variables, carrier: 'body' };
}

/** The operation a document runs: the one named, or its only one; undefined when it names none it has. */
export function selectedOperation(
  document: DocumentNode,
  operationName: string | undefined,
): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === 'OperationDefinition',
  );
  if (operationName === undefined) return operations.length === 1 ? operations[0] : undefined;
  return operations.find((operation) => operation.name?.value === operationName);
}

/** The fragments an operation spreads, directly or through other fragments, by name. */
export function reachableFragments(
  document: DocumentNode,
  operation: OperationDefinitionNode,
): Map<string, FragmentDefinitionNode> {
  const all = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === 'FragmentDefinition') all.set(definition.name.value, definition);
  const reached = new Map<string, FragmentDefinitionNode>();
  const pending: SelectionSetNode[] = [operation.selectionSet];
  for (let set = pending.pop(); set !== undefined; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === 'FragmentSpread') {
        const fragment = all.get(selection.name.value);
        if (fragment && !reached.has(fragment.name.value)) {
          reached.set(fragment.name.value, fragment);
          pending.push(fragment.selectionSet);
        }
      } else if (selection.selectionSet) pending.push(selection.selectionSet);
    }
  }
  return reached;
}

/**
 * The depth of a selection set (a root field is at depth 1) and how many fields it selects at every level, fragments
 * counted where they are spread. Each fragment is measured once (fragments spreading fragments ten times each would
 * otherwise take exponential time). It runs before the query is validated (a deep or wide query is refused before
 * the costlier validation), so a fragment already being measured is not followed again: a cycle, which validation
 * then refuses.
 */
export function measure(
  set: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): { depth: number; fields: number } {
  const measured = new Map<string, { depth: number; fields: number }>();
  const visit = (inner: SelectionSetNode): { depth: number; fields: number } => {
    let fields = 0;
    let depth = 0;
    for (const selection of inner.selections) {
      let below = { depth: 0, fields: 0 };
      if (selection.kind === 'FragmentSpread') {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (fragment && !measured.has(name)) {
          measured.set(name, below); // on the way down: a cycle counts nothing
          measured.set(name, visit(fragment.selectionSet));
        }
        below = measured.get(name) ?? below;
      } else if (selection.selectionSet) below = visit(selection.selectionSet);
      fields += below.fields + (selection.kind === 'Field' ? 1 : 0);
      depth = Math.max(depth, below.depth + (selection.kind === 'Field' ? 1 : 0));
    }
    return { depth, fields };
  };
  return visit(set);
}

/** A field of the request as authorization sees it: its parent type and name, and where it is in the query. */
export interface RequestedField {
  readonly type: string;
  readonly field: string;
  readonly node: FieldNode;
}

/** Every field the operation selects, with the type it is selected on (fragments included, each once). */
export function requestedFields(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): RequestedField[] {
  const graphql = graphqlJs();
  const typeInfo = new graphql.TypeInfo(schema);
  const fields: RequestedField[] = [];
  const document: DocumentNode = {
    kind: graphql.Kind.DOCUMENT,
    definitions: [operation, ...fragments.values()],
  };
  graphql.visit(
    document,
    graphql.visitWithTypeInfo(typeInfo, {
      Field(node) {
        const parent = typeInfo.getParentType();
        fields.push({ type: parent?.name ?? '', field: node.name.value, node });
      },
    }),
  );
  return fields;
}

/**
 * The document without `removed` fields, and without what their removal leaves invalid: a field or inline fragment
 * whose selections are all gone, a spread of a fragment that became empty, a fragment no longer spread, a variable
 * no longer used; only the operation that runs is kept. Undefined when the operation selects nothing any more.
 */
export function withoutFields(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  removed: ReadonlySet<FieldNode>,
): DocumentNode | undefined {
  const graphql = graphqlJs();
  let current = graphql.visit(document, { Field: (node) => (removed.has(node) ? null : undefined) });
  // Each round removes one level of what became empty; a query is at most as deep as it is long.
  for (let round = 0; round < 64; round += 1) {
    const empty = new Set<string>();
    for (const definition of current.definitions)
      if (definition.kind === 'FragmentDefinition' && definition.selectionSet.selections.length === 0)
        empty.add(definition.name.value);
    const emptySet = (node: { selectionSet?: SelectionSetNode }) =>
      node.selectionSet !== undefined && node.selectionSet.selections.length === 0 ? null : undefined;
    const next: DocumentNode = graphql.visit(current, {
      Field: { leave: emptySet },
      InlineFragment: { leave: emptySet },
      FragmentSpread: (node) => (empty.has(node.name.value) ? null : undefined),
      FragmentDefinition: (node) => (empty.has(node.name.value) ? null : undefined),
    });
    if (graphql.print(next) === graphql.print(current)) break;
    current = next;
  }
  const kept = selectedOperation(current, operation.name?.value);
  if (kept === undefined || kept.selectionSet.selections.length === 0) return undefined;
  const used = reachableFragments(current, kept);
  // Only the operation that runs goes on (with its fragments): the others' variables are not this one's to check.
  const sent: DocumentNode = { kind: graphql.Kind.DOCUMENT, definitions: [kept, ...used.values()] };
  const variables = new Set<string>();
  graphql.visit(sent, {
    VariableDefinition: () => false,
    Variable: (node) => {
      variables.add(node.name.value);
    },
  });
  return graphql.visit(sent, {
    VariableDefinition: (node) => (variables.has(node.variable.name.value) ? undefined : null),
  });
}
