import { describe, expect, it } from 'vitest';
import type { JToken } from '../../../../src/expr/index.js';
import { writeJson } from '../../../../src/expr/library/json/write.js';
import { buildPipeline } from '../../../../src/policy/index.js';
import { PipelineRun, type RequestDescription } from '../../../../src/policy/runner.js';
import { buildGraphqlSchema } from '../../../../src/policy/shared/graphql.js';
import type { OperationDefinition } from '../../../../src/policy/shared/operation-definition.js';
import { compileAt, fakeServices, policies, request } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

// learn.microsoft.com/azure/api-management/validate-graphql-request-policy (specialized806/azure-docs @ 2cec45c6):
// the attributes, <authorize>/<rule path action>, the four actions, /__* for introspection, the 250-field limit,
// request errors as an errors block without data, GraphQLErrors and error-variable-name.

const SDL = `
type Query { missions(limit: Int): [Mission!]! launch(id: ID!): Launch user: User }
type Mutation { deleteUser(id: ID!): Boolean }
type Mission { name: String! id: ID! crew: [Person!]! }
type Person { name: String! friends: [Person!]! }
type Launch { id: ID! site: String mission: Mission }
type User { id: ID! email: String }
`;
const schema = buildGraphqlSchema(SDL);
if (Array.isArray(schema)) throw new Error('test schema is not valid');
const definition: OperationDefinition = {
  templateParameters: [],
  queryParameters: [],
  headerParameters: [],
  responses: [],
  graphql: { schema },
};

/** The policy at the API scope (where API Management applies it), run on a GraphQL request. */
async function run(statement: string, req: Partial<RequestDescription>) {
  const pipeline = buildPipeline({ api: compileAt(policies({ inbound: statement }), 'api') });
  const pipelineRun = new PipelineRun(pipeline, request({ definition, ...req }), fakeServices());
  const outcome = await pipelineRun.onRequest();
  return { outcome, context: pipelineRun.context, run: pipelineRun };
}

const post = (payload: unknown, headers: [string, string][] = []) => ({
  method: 'POST',
  url: 'https://gw.example.com/',
  headers: [['content-type', 'application/json'], ...headers] as [string, string][],
  body: Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)),
});
const get = (query: string) => ({
  method: 'GET',
  url: `https://gw.example.com/?query=${encodeURIComponent(query)}`,
  headers: [],
});

const refused = (outcome: Awaited<ReturnType<typeof run>>['outcome']) => {
  if (outcome.kind !== 'respond') throw new Error('the request was forwarded');
  return { status: outcome.response.status, body: JSON.parse(outcome.response.body.toString()) };
};
const variable = (context: { variables: { get(name: string): unknown } }, name: string) =>
  JSON.parse(writeJson(null, context.variables.get(name) as JToken, false));
const sentBody = (r: Awaited<ReturnType<typeof run>>) => {
  if (r.outcome.kind !== 'forward') throw new Error(`not forwarded: ${r.outcome.kind}`);
  return r.context.request.body?.bytes.toString() ?? '';
};

const policy = (attributes: string, rules = '') =>
  `<validate-graphql-request ${attributes}>${rules ? `<authorize>${rules}</authorize>` : ''}</validate-graphql-request>`;

describe('validate-graphql-request', () => {
  it('passes a valid query through unchanged, POST and GET', async () => {
    const posted = await run(policy('max-size="102400"'), post({ query: '{ missions { name } }' }));
    expect(posted.outcome.kind).toBe('forward');
    expect(posted.run.run.requestBodyChanged).toBe(false);
    const got = await run(policy('max-size="102400"'), get('{ user { id } }'));
    expect(got.outcome.kind).toBe('forward');
    expect(variable(got.context, 'GraphQLErrors')).toEqual([]);
  });

  it('max-size: a larger payload is a request error (400, an errors block and no data)', async () => {
    const { outcome, context } = await run(policy('max-size="20"'), post({ query: '{ missions { name } }' }));
    const { status, body } = refused(outcome);
    expect(status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(body.errors[0].message).toMatch(/more than the 20 bytes allowed/);
    expect(context.lastError?.reason).toBe('RequestSizeLimitExceeded');
    expect(context.lastError?.source).toBe('validate-graphql-request');
  });

  it('max-depth: deeper queries are refused; the default is 6', async () => {
    const deep = '{ missions { crew { friends { friends { friends { friends { name } } } } } } }';
    const byDefault = await run(policy('max-size="102400"'), post({ query: deep }));
    expect(refused(byDefault.outcome).body.errors[0].message).toBe(
      'The query is 7 levels deep, more than the 6 allowed.',
    );
    expect(byDefault.context.lastError?.reason).toBe('QueryDepthExceeded');
    const set = await run(
      policy('max-size="102400" max-depth="2"'),
      post({ query: '{ missions { crew { name } } }' }),
    );
    expect(refused(set.outcome).status).toBe(400);
    const within = await run(
      policy('max-size="102400" max-depth="3"'),
      post({ query: '{ missions { crew { name } } }' }),
    );
    expect(within.outcome.kind).toBe('forward');
  });

  it('max-depth counts the fields of fragments where they are spread', async () => {
    const query = 'query { missions { ...M } } fragment M on Mission { crew { name } }';
    const { outcome } = await run(policy('max-size="102400" max-depth="2"'), post({ query }));
    expect(refused(outcome).body.errors[0].message).toMatch(/3 levels deep/);
  });

  it('max-size and max-depth take policy expressions', async () => {
    const { outcome } = await run(
      policy('max-size="@(10 * 2)" max-depth="@(1 + 1)"'),
      post({ query: '{ missions { name } }' }),
    );
    expect(refused(outcome).body.errors[0].message).toMatch(/more than the 20 bytes/);
  });

  it('error-variable-name: the errors go to that variable and to GraphQLErrors', async () => {
    const { context } = await run(
      policy('max-size="102400" error-variable-name="gqlErrors"'),
      post({ query: '{ missions { nope } }' }),
    );
    const errors = variable(context, 'gqlErrors');
    expect(errors[0]).toMatchObject({
      message: 'Cannot query field "nope" on type "Mission". Did you mean "name"?',
    });
    expect(errors[0].locations).toEqual([{ line: 1, column: 14 }]);
    expect(variable(context, 'GraphQLErrors')).toEqual(errors);
  });

  it('a query invalid against the schema is a request error with graphql-js messages and locations', async () => {
    const { outcome, context } = await run(
      policy('max-size="102400"'),
      post({ query: '{ launch { site } }' }),
    );
    const { body } = refused(outcome);
    expect(body.errors[0].message).toMatch(/argument "id" of type "ID!" is required/);
    expect(context.lastError?.reason).toBe('GraphQLValidationFailed');
  });

  it('a syntax error is a request error', async () => {
    const { outcome, context } = await run(
      policy('max-size="102400"'),
      post({ query: '{ missions { name }' }),
    );
    expect(refused(outcome).body.errors[0].locations).toBeDefined();
    expect(context.lastError?.reason).toBe('GraphQLSyntaxError');
  });

  it('a request that is not GraphQL (no query) is a request error', async () => {
    const { outcome, context } = await run(policy('max-size="102400"'), post({ notQuery: 1 }));
    expect(refused(outcome).body.errors[0].message).toMatch(/"query" string/);
    expect(context.lastError?.reason).toBe('InvalidGraphQLRequest');
  });

  it('more operations than one without operationName, or an unknown operationName, is a request error', async () => {
    const query = 'query A { user { id } } query B { user { email } }';
    const none = await run(policy('max-size="102400"'), post({ query }));
    expect(refused(none.outcome).body.errors[0].message).toMatch(/Must provide operation name/);
    const named = await run(policy('max-size="102400"'), post({ query, operationName: 'B' }));
    expect(named.outcome.kind).toBe('forward');
  });

  it('more than 250 fields cannot be validated: a request error', async () => {
    const query = `{ user { ${Array.from({ length: 251 }, (_, i) => `f${i}: id`).join(' ')} } }`;
    const { outcome, context } = await run(policy('max-size="102400" max-depth="6"'), post({ query }));
    expect(refused(outcome).body.errors[0].message).toMatch(/252 fields/);
    expect(context.lastError?.reason).toBe('QueryFieldsExceeded');
  });

  it('refuses queries built to be costly before validating them: nested fragments, cycles, deep nesting', async () => {
    // Ten fragments each spreading the next ten times: 10^10 fields once expanded, measured in linear time.
    const levels = Array.from(
      { length: 10 },
      (_, i) =>
        `fragment F${i} on Person { ${i === 9 ? 'name' : `friends { ${`...F${i + 1} `.repeat(10)}}`} }`,
    );
    const wide = await run(
      policy('max-size="102400" max-depth="100"'),
      post({ query: `{ missions { crew { ...F0 } } } ${levels.join(' ')}` }),
    );
    expect(wide.context.lastError?.reason).toBe('QueryFieldsExceeded');
    const cycle = await run(
      policy('max-size="102400"'),
      post({ query: '{ missions { crew { ...A } } } fragment A on Person { friends { ...A } }' }),
    );
    expect(refused(cycle.outcome).body.errors[0].message).toMatch(/Cannot spread fragment "A" within itself/);
    const deep = await run(
      policy('max-size="102400"'),
      post({ query: `{${'user{'.repeat(15_000)}id${'}'.repeat(15_001)}` }),
    );
    // graphql-js's parser overflows the stack on it (were it ever iterative, max-depth would refuse it): a 400, not a 500.
    expect(refused(deep.outcome).status).toBe(400);
    expect(deep.context.lastError?.message).toMatch(/nested too deeply|levels deep/);
  });

  it('authorize reject: a request error, the request never reaches the backend', async () => {
    const { outcome, context } = await run(
      policy('max-size="102400"', '<rule path="/Mutation/deleteUser" action="reject" />'),
      post({ query: 'mutation { deleteUser(id: "1") }' }),
    );
    expect(refused(outcome).body).toEqual({
      errors: [{ message: 'The field "Mutation.deleteUser" is not authorized.' }],
    });
    expect(context.lastError?.reason).toBe('FieldRejected');
  });

  it('/__* is the introspection system', async () => {
    const { outcome } = await run(
      policy('max-size="102400"', '<rule path="/__*" action="reject" />'),
      post({ query: '{ __schema { queryType { name } } }' }),
    );
    expect(refused(outcome).status).toBe(400);
    const plain = await run(
      policy('max-size="102400"', '<rule path="/__*" action="reject" />'),
      get('{ user { id } }'),
    );
    expect(plain.outcome.kind).toBe('forward');
  });

  it('authorize remove: the field leaves the forwarded query (and what only it used); a field error is recorded', async () => {
    const r = await run(
      policy('max-size="102400" error-variable-name="e"', '<rule path="/Mission/name" action="remove" />'),
      post({
        query:
          'query Q($n: Int, $id: ID!) { missions(limit: $n) { id name } launch(id: $id) { mission { name } } }',
        variables: { n: 1, id: '7' },
        operationName: 'Q',
      }),
    );
    const sent = JSON.parse(sentBody(r));
    expect(sent.operationName).toBe('Q');
    expect(sent.variables).toEqual({ n: 1, id: '7' });
    expect(sent.query).not.toMatch(/name/);
    expect(sent.query).toMatch(/missions\(limit: \$n\)/);
    // $id was used only by launch: its definition goes with it, or the backend would refuse an unused variable.
    expect(sent.query).not.toMatch(/\$id/);
    // launch { mission { name } } lost its only leaf, so mission and then launch go too.
    expect(sent.query).not.toMatch(/launch/);
    expect(variable(r.context, 'e')).toHaveLength(2);
    expect(variable(r.context, 'e')[0].message).toMatch(/"name" was removed/);
  });

  it("authorize remove: the field's error joins the errors of the backend's answer, beside its data", async () => {
    const statement = policy('max-size="102400"', '<rule path="/User/email" action="remove" />');
    const r = await run(statement, post({ query: '{ user { id email } }' }));
    const answered = await r.run.onResponse({
      status: 200,
      headers: [['content-type', 'application/json']],
      body: Buffer.from(JSON.stringify({ data: { user: { id: 'u1' } } })),
    });
    expect(JSON.parse(answered.body.toString())).toEqual({
      data: { user: { id: 'u1' } },
      errors: [
        {
          message: 'The field "email" was removed from the request (not authorized).',
          locations: [{ line: 1, column: 13 }],
        },
      ],
    });
    // The pipeline asked for the response body at load, because a rule may remove a field.
    const pipeline = buildPipeline({ api: compileAt(policies({ inbound: statement }), 'api') });
    expect(pipeline.needs.responseBody).toBe(true);
    const rejecting = buildPipeline({
      api: compileAt(
        policies({ inbound: policy('max-size="9"', '<rule path="/__*" action="reject" />') }),
        'api',
      ),
    });
    expect(rejecting.needs.responseBody).toBe(false);
  });

  it('authorize remove on a GET rewrites ?query=', async () => {
    const r = await run(
      policy('max-size="102400"', '<rule path="/User/email" action="remove" />'),
      get('{ user { id email } }'),
    );
    expect(r.outcome.kind).toBe('forward');
    expect(r.context.request.url.query.get('query')?.[0]).toMatch(/^\{\s*user\s*\{\s*id\s*\}\s*\}$/);
  });

  it('removing every field of the operation is a request error', async () => {
    const { outcome, context } = await run(
      policy('max-size="102400"', '<rule path="/Query/*" action="remove" />'),
      post({ query: '{ user { id } }' }),
    );
    expect(refused(outcome).status).toBe(400);
    expect(context.lastError?.reason).toBe('AllFieldsRemoved');
  });

  it('the most specific rule wins; ignore passes to the next; allow is the default action', async () => {
    const rules =
      '<rule path="/User/*" action="reject" /><rule path="/User/id" action="ignore" /><rule path="/User/email" />';
    const email = await run(policy('max-size="102400"', rules), get('{ user { email } }'));
    expect(email.outcome.kind).toBe('forward');
    const id = await run(policy('max-size="102400"', rules), get('{ user { id } }'));
    expect(refused(id.outcome).status).toBe(400);
  });

  it('a rule path of one segment names a field of a root type', async () => {
    const { outcome } = await run(
      policy('max-size="102400"', '<rule path="/user" action="reject" />'),
      get('{ user { id } }'),
    );
    expect(refused(outcome).status).toBe(400);
  });

  it("a one-segment path follows the schema's own root types (schema { query: Root })", async () => {
    const rooted = buildGraphqlSchema('schema { query: Root } type Root { secret: String open: String }');
    if (Array.isArray(rooted)) throw new Error('test schema is not valid');
    const pipeline = buildPipeline({
      api: compileAt(
        policies({ inbound: policy('max-size="1000"', '<rule path="/secret" action="reject" />') }),
        'api',
      ),
    });
    const ask = async (query: string) =>
      new PipelineRun(
        pipeline,
        request({ definition: { ...definition, graphql: { schema: rooted } }, ...get(query) }),
        fakeServices(),
      ).onRequest();
    expect(refused(await ask('{ secret }')).body.errors[0].message).toBe(
      'The field "Root.secret" is not authorized.',
    );
    expect((await ask('{ open }')).kind).toBe('forward');
  });

  it('a rule action may be an expression', async () => {
    const rule =
      '<rule path="/User/email" action="@(context.Request.Headers.Count > 2 ? &quot;reject&quot; : &quot;allow&quot;)" />';
    const few = await run(policy('max-size="102400"', rule), post({ query: '{ user { email } }' }));
    expect(few.outcome.kind).toBe('forward');
    const many = await run(
      policy('max-size="102400"', rule),
      post({ query: '{ user { email } }' }, [
        ['x-a', '1'],
        ['x-b', '2'],
      ]),
    );
    expect(refused(many.outcome).status).toBe(400);
    const bad = await run(
      policy('max-size="102400"', '<rule path="/User/email" action="@(&quot;deny&quot;)" />'),
      post({ query: '{ user { email } }' }),
    );
    expect(refused(bad.outcome).status).toBe(500);
    expect(bad.context.lastError?.reason).toBe('ExpressionValueEvaluationFailure');
  });

  it('does nothing on the requests of an API that is not a GraphQL one (inherited from the global scope)', async () => {
    const pipeline = buildPipeline({
      global: compileAt(policies({ inbound: policy('max-size="10"') }), 'global'),
    });
    const pipelineRun = new PipelineRun(pipeline, request(post({ query: '{ a }' })), fakeServices());
    const outcome = await pipelineRun.onRequest();
    expect(pipelineRun.context.lastError).toBeNull();
    // (A pipeline of the global scope alone has no forward-request: it answers 200 itself.)
    expect(outcome.kind === 'respond' ? outcome.response.status : 200).toBe(200);
  });

  it('is refused at load when misused', () => {
    const at = (
      statement: string,
      section: 'inbound' | 'outbound' = 'inbound',
      scope: 'api' | 'operation' = 'api',
    ) => diagnosticsOf(statement, section, scope).join('\n');
    expect(at('<validate-graphql-request />')).toMatch(/max-size/);
    expect(at(policy('max-size="102401"'))).toMatch(/max-size/);
    expect(at(policy('max-size="-1"'))).toMatch(/max-size/);
    expect(at(policy('max-size="100" max-depth="deep"'))).toMatch(/max-depth/);
    expect(at(policy('max-size="100"', '<rule path="Query.user" />'))).toMatch(/must be \/type\/field/);
    expect(at(policy('max-size="100"', '<rule action="reject" />'))).toMatch(/path/);
    expect(at(policy('max-size="100"', '<rule path="/Query/user" action="deny" />'))).toMatch(/action/);
    expect(at(policy('max-size="100"'), 'outbound')).toMatch(/validate-graphql-request/);
    expect(at(policy('max-size="100"'), 'inbound', 'operation')).toMatch(/validate-graphql-request/);
    expect(at(`${policy('max-size="100"')}${policy('max-size="100"')}`)).toMatch(/once/);
    expect(
      at('<validate-graphql-request max-size="100"><authorize /><authorize /></validate-graphql-request>'),
    ).toMatch(/authorize/);
  });
});
