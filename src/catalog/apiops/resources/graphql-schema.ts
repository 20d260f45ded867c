import { buildGraphqlSchema, sdlOfIntrospection } from '../../../policy/shared/graphql.js';
import type { ImportedOperation } from '../../importers/index.js';
import type { ImportContext } from '../context.js';
import type { ApiEntry } from '../model.js';

/**
 * A GraphQL API's schema from its artifacts: the SDL API Management's extractor writes (`specification.graphql`, or
 * `schema.graphql` from its first releases), else an introspection result (`specification.json`, the answer to the
 * introspection query) turned into SDL. It is copied beside the configuration as the API's `graphql.schema`; the API
 * has no operations of its own (undefined, the API left out and said why, when there is no schema to read).
 */
export function graphqlSchemaOf(
  context: ImportContext,
  folder: string,
  api: ApiEntry,
): ImportedOperation[] | undefined {
  const { artifacts, output } = context;
  const present = artifacts.files(`apis/${folder}`);
  const sdlFile = ['specification.graphql', 'schema.graphql'].find((name) => present.includes(name));
  let sdl: string | undefined;
  let source: string;
  if (sdlFile !== undefined) {
    source = `apis/${folder}/${sdlFile}`;
    sdl = artifacts.text(source);
  } else if (present.includes('specification.json')) {
    source = `apis/${folder}/specification.json`;
    try {
      sdl = sdlOfIntrospection(JSON.parse(artifacts.text(source) ?? ''));
    } catch (error) {
      artifacts.skip(
        source,
        `not an introspection result (${(error as Error).message}); the API is left out`,
      );
      return undefined;
    }
  } else {
    artifacts.skip(
      `apis/${folder}`,
      'a GraphQL API without its schema (specification.graphql); the API is left out',
    );
    return undefined;
  }
  const built = buildGraphqlSchema(sdl ?? '');
  if (Array.isArray(built)) {
    const first = built[0]!;
    const at = first.line === undefined ? '' : ` at ${first.line}:${first.column}`;
    artifacts.skip(source, `not a valid GraphQL schema${at} (${first.message}); the API is left out`);
    return undefined;
  }
  const file = `schemas/${api.id}.graphql`;
  output.set(file, sdl!);
  api.graphql = { schema: file };
  return [];
}
