import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type * as GraphqlJs from 'graphql';
import type * as GraphqlHttp from 'graphql-http/lib/use/http';

// Both through require: graphql-http's CommonJS build requires graphql-js's CommonJS build, and a schema built by
// the ES module build is "from another realm" to it.
const require = createRequire(import.meta.url);
const { buildSchema } = require('graphql') as typeof GraphqlJs;
const { createHandler } = require('graphql-http/lib/use/http') as typeof GraphqlHttp;

/** What the GraphQL server was asked: the request's GraphQL parameters and headers. */
export interface ReceivedOperation {
  readonly query: string;
  readonly operationName: string | undefined;
  readonly variables: unknown;
  readonly headers: Record<string, string | string[] | undefined>;
}

export interface GraphqlBackend {
  readonly url: string;
  /** The schema it serves, in SDL: what the gateway's API is configured with. */
  readonly sdl: string;
  readonly received: ReceivedOperation[];
  close(): Promise<void>;
}

const SDL = `type Query {
  missions(limit: Int): [Mission!]!
  user: User
}

type Mutation {
  deleteUser(id: ID!): Boolean
}

type Mission {
  id: ID!
  name: String!
  crew: [Person!]!
}

type Person {
  name: String!
  friends: [Person!]!
}

type User {
  id: ID!
  email: String
}
`;

const people = (depth: number): unknown[] =>
  depth === 0 ? [] : [{ name: `crew-${depth}`, friends: () => people(depth - 1) }];

/**
 * A GraphQL server over node:http by graphql-http (the GraphQL over HTTP reference implementation) on graphql-js: a
 * small space-missions schema with resolvers, recording every operation it is asked to run.
 */
export async function startGraphqlBackend(): Promise<GraphqlBackend> {
  const received: ReceivedOperation[] = [];
  const rootValue = {
    missions: ({ limit }: { limit?: number }) =>
      [
        { id: '1', name: 'Apollo', crew: () => people(5) },
        { id: '2', name: 'Gemini', crew: () => people(5) },
      ].slice(0, limit ?? 2),
    user: () => ({ id: 'u1', email: 'pilot@example.com' }),
    deleteUser: () => true,
  };
  const handler = createHandler({
    schema: buildSchema(SDL),
    rootValue,
    context: (request, params) => {
      received.push({
        query: params.query,
        operationName: params.operationName ?? undefined,
        variables: params.variables,
        headers: request.raw.headers,
      });
      return undefined;
    },
  });
  const server = createServer((req, res) => {
    handler(req, res).catch(() => {
      res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sdl: SDL,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
