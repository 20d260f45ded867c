import { describe, expect, it } from 'vitest';
import { inMemoryGateway } from './harness.js';

/**
 * GraphQL pass-through APIs at load (https://learn.microsoft.com/azure/api-management/graphql-api): the schema read
 * from its SDL file and built once, the two operations the catalog matches requests with, and what a declaration
 * may not say.
 */
const DIR = '/tmp/portcullis-graphql';
const load = inMemoryGateway(DIR);

const SDL = 'type Query {\n  hello: String\n}\n';
const graphqlApi = (extra = '') => `apis:
  - id: gql
    type: graphql
    urlSuffix: gql
    serviceUrl: http://127.0.0.1:1/graphql
    graphql:
      schema: schema.graphql
${extra}`;

describe('a GraphQL API at load', () => {
  it('has POST and GET at its root, with the schema in their definition', async () => {
    const gateway = await load(graphqlApi(), { 'schema.graphql': SDL });
    const api = gateway.catalog.apis.find((candidate) => candidate.id === 'gql')!;
    expect(api.type).toBe('graphql');
    expect(api.operations.map((operation) => [operation.id, operation.method])).toEqual([
      ['graphql-post', 'POST'],
      ['graphql-get', 'GET'],
    ]);
    expect(api.operations[0]!.definition.graphql?.schema.getQueryType()?.name).toBe('Query');
  });

  it('matches only GraphQL requests: a JSON POST or a GET with ?query=', async () => {
    const { catalog } = await load(graphqlApi(), { 'schema.graphql': SDL });
    const kind = (method: string, query: string, contentType?: string) =>
      catalog.match('h', method, '/gql', new URLSearchParams(query), { contentType }).kind;
    expect(kind('POST', '', 'application/json; charset=utf-8')).toBe('operation');
    expect(kind('GET', 'query={hello}')).toBe('operation');
    expect(kind('POST', '', 'text/plain')).toBe('no-operation');
    expect(kind('GET', '')).toBe('no-operation');
    expect(kind('PUT', '', 'application/json')).toBe('no-operation');
  });

  it('refuses a schema that is not valid SDL, at its place in the schema file', async () => {
    const error = await load(graphqlApi(), { 'schema.graphql': 'type Query {\n  hello: Strin\n}\n' }).catch(
      (caught: Error) => caught,
    );
    expect(String(error)).toContain(
      `${DIR}/schema.graphql:2:10: the GraphQL schema of API "gql" is not valid: Unknown type "Strin".`,
    );
    const syntax = await load(graphqlApi(), { 'schema.graphql': 'type Query {\n  hello String\n}\n' }).catch(
      (caught: Error) => caught,
    );
    expect(String(syntax)).toMatch(/schema\.graphql:2:9: .*Syntax Error/);
  });

  it('refuses a missing schema file, a missing schema, operations and a definition', async () => {
    const missingFile = await load(graphqlApi()).catch((caught: Error) => caught);
    expect(String(missingFile)).toMatch(
      /gateway\.yaml:\d+:\d+: .*GraphQL schema file "schema.graphql" not found/,
    );
    const noSchema = await load(
      'apis:\n  - id: gql\n    type: graphql\n    urlSuffix: gql\n    serviceUrl: http://127.0.0.1:1\n',
    ).catch((caught: Error) => caught);
    expect(String(noSchema)).toContain('a GraphQL API needs its schema: graphql.schema, an SDL file');
    const operations = await load(
      graphqlApi('    operations:\n      - method: POST\n        urlTemplate: /\n'),
      {
        'schema.graphql': SDL,
      },
    ).catch((caught: Error) => caught);
    expect(String(operations)).toContain('a GraphQL API lists no operations');
    const notGraphql = await load(
      'apis:\n  - id: h\n    urlSuffix: h\n    serviceUrl: http://127.0.0.1:1\n    graphql:\n      schema: s.graphql\n',
    ).catch((caught: Error) => caught);
    expect(String(notGraphql)).toContain(
      'only an API of type graphql has a GraphQL schema; this one is http',
    );
  });

  it('refuses validate-graphql-request at the API scope of an API that is not a GraphQL one (file:line:col)', async () => {
    const error = await load(
      'apis:\n  - id: h\n    urlSuffix: h\n    serviceUrl: http://127.0.0.1:1\n    policy: h.xml\n',
      {
        'h.xml':
          '<policies>\n  <inbound>\n    <base />\n    <validate-graphql-request max-size="100" />\n  </inbound>\n  <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>\n</policies>\n',
      },
    ).catch((caught: Error) => caught);
    expect(String(error)).toContain(
      `${DIR}/h.xml:4:5: <validate-graphql-request> applies to GraphQL APIs; API "h" is of type http and has no GraphQL schema`,
    );
  });

  it('does not load graphql-js for a configuration without a GraphQL API', async () => {
    // The engine's own start: graphql-js is required only when a GraphQL schema is built.
    const { execFileSync } = await import('node:child_process');
    const script = `
      const { loadConfigText } = await import('./src/config/load.ts');
      const { compileGateway } = await import('./src/config/gateway.ts');
      compileGateway(await loadConfigText('apis:\\n  - id: a\\n    urlSuffix: a\\n    serviceUrl: http://127.0.0.1:1\\n', '/tmp/g.yaml', new Map([['/tmp/g.yaml', '']])));
      const { createRequire } = await import('node:module');
      const cache = createRequire(import.meta.url).cache;
      console.log(Object.keys(cache).some((file) => file.includes('/node_modules/graphql/')));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('false');
  });
});
