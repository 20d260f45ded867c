/**
 * GraphQL pass-through APIs (`type: graphql`), as API Management has them
 * (https://learn.microsoft.com/azure/api-management/graphql-api): one endpoint, the API's root, to which a client
 * POSTs `{ query, operationName, variables }` as JSON or sends a GET with `?query=`; the schema (SDL) is what
 * validate-graphql-request checks a request against. This file holds what the configuration knows of them: the
 * two operations, the schema read and built at load, and what a declaration may not say.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Diagnostic } from '../diagnostic.js';
import type { CompiledDocument, SectionItem } from '../policy/index.js';
import { buildGraphqlSchema, type GraphqlDefinition } from '../policy/shared/graphql.js';
import { fileText, type LoadedConfig } from './load.js';
import { rootOperation } from './root-operation.js';
import type { ApiConfig, OperationConfig } from './schema.js';

/**
 * The operations of a GraphQL API: POST and GET at its root. API Management shows none (its GraphQL policies apply
 * at the API scope or above), so a configuration lists none; they exist for the catalog to match requests.
 */
export const graphqlOperations: readonly OperationConfig[] = [
  rootOperation('graphql-post', 'POST'),
  rootOperation('graphql-get', 'GET'),
];

/**
 * The schema of every GraphQL API by API id, read from its SDL file and built by graphql-js (loaded only when a
 * configuration has a GraphQL API); problems of a declaration go to `configProblem`, problems of an SDL file are
 * placed in that file.
 */
export function graphqlDefinitions(
  loaded: LoadedConfig,
  problems: Diagnostic[],
  configProblem: (keys: (string | number)[], message: string) => Diagnostic,
): Map<string, GraphqlDefinition> {
  const definitions = new Map<string, GraphqlDefinition>();
  for (const [index, api] of loaded.config.apis.entries()) {
    for (const [keys, message] of graphqlApiProblems(api, index)) problems.push(configProblem(keys, message));
    if (api.type !== 'graphql' || api.graphql === undefined) continue;
    const file = path.resolve(loaded.directory, api.graphql.schema);
    let sdl: string;
    try {
      sdl = fileText(loaded.files, file) ?? readFileSync(file, 'utf8');
    } catch {
      problems.push(
        configProblem(
          ['apis', index, 'graphql', 'schema'],
          `GraphQL schema file "${api.graphql.schema}" not found (looked at ${file})`,
        ),
      );
      continue;
    }
    const built = buildGraphqlSchema(sdl);
    if (!Array.isArray(built)) {
      definitions.set(api.id, Object.freeze({ schema: built }));
      continue;
    }
    for (const problem of built)
      problems.push({
        file,
        ...(problem.line === undefined ? {} : { line: problem.line, column: problem.column }),
        code: 'graphql-schema',
        message: `the GraphQL schema of API "${api.id}" is not valid: ${problem.message}`,
      });
  }
  return definitions;
}

/** What is wrong with an API's GraphQL declaration: each problem's key path and message. */
export function graphqlApiProblems(api: ApiConfig, apiIndex: number): [(string | number)[], string][] {
  if (api.type !== 'graphql')
    return api.graphql === undefined
      ? []
      : [
          [
            ['apis', apiIndex, 'graphql'],
            `only an API of type graphql has a GraphQL schema; this one is ${api.type}`,
          ],
        ];
  const problems: [(string | number)[], string][] = [];
  if (api.graphql === undefined)
    problems.push([['apis', apiIndex], 'a GraphQL API needs its schema: graphql.schema, an SDL file']);
  if (api.definition !== undefined)
    problems.push([
      ['apis', apiIndex, 'definition'],
      'a GraphQL API has no definition file: its schema is graphql.schema',
    ]);
  if (api.operations.length > 0)
    problems.push([
      ['apis', apiIndex, 'operations'],
      'a GraphQL API lists no operations (API Management applies GraphQL policies at the API scope or above); its requests are POST and GET at its root',
    ]);
  return problems;
}

/**
 * validate-graphql-request applied at the API scope of an API that is not a GraphQL one: there is no schema to
 * validate against (inherited from the global or a product scope it does nothing on such an API's requests).
 */
export function graphqlElementsOutside(document: CompiledDocument | undefined, api: ApiConfig): Diagnostic[] {
  if (document === undefined || api.type === 'graphql') return [];
  return [...document.sections.values()].flatMap((items) =>
    items
      .filter((item): item is Extract<SectionItem, { kind: 'statement' }> => item.kind === 'statement')
      .flatMap((item) => item.uses)
      .filter((use) => use.element === 'validate-graphql-request')
      .map((use) => ({
        file: use.file,
        line: use.line,
        column: use.column,
        code: 'graphql-only',
        message: `<validate-graphql-request> applies to GraphQL APIs; API "${api.id}" is of type ${api.type} and has no GraphQL schema`,
      })),
  );
}
