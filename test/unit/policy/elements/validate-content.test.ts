import { describe, expect, it } from 'vitest';
import type { JToken } from '../../../../src/expr/index.js';
import { writeJson } from '../../../../src/expr/library/json/write.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../../src/policy/document.js';
import { buildPipeline } from '../../../../src/policy/pipeline.js';
import type { RequestDescription } from '../../../../src/policy/runner.js';
import { PipelineRun } from '../../../../src/policy/runner.js';
import type { OperationDefinition } from '../../../../src/policy/shared/operation-definition.js';
import { fakeServices, inbound, outbound, policies, request } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

// learn.microsoft.com/azure/api-management/validate-content-policy; errors: the "Validation errors" table
// (includes/api-management-validation-policy-error-reference.md).

const PET = {
  $ref: '#/$defs/Pet',
  $defs: {
    Pet: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
    },
  },
};
const OPEN_PET = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };

const definition: OperationDefinition = {
  templateParameters: [],
  queryParameters: [],
  headerParameters: [],
  requestContent: [{ contentType: 'application/json', schema: PET }],
  responses: [
    { status: '200', content: [{ contentType: 'application/json', schema: OPEN_PET }] },
    { status: '404' },
  ],
};

function post(
  body: string,
  contentType: string | undefined = 'application/json',
): Partial<RequestDescription> {
  return {
    method: 'POST',
    headers: contentType === undefined ? [] : [['Content-Type', contentType]],
    body: Buffer.from(body),
    definition,
  };
}

const policy = (inner: string, attributes = '') =>
  `<validate-content unspecified-content-type-action="prevent" max-size="100" size-exceeded-action="prevent" errors-variable-name="errs" ${attributes}>${inner}</validate-content>`;
const json = (action = 'prevent', extra = '') =>
  `<content type="application/json" validate-as="json" action="${action}" ${extra}/>`;

/** The errors variable as JSON, the way an expression's `.ToString()` of the JArray reads it. */
const errorsOf = (context: { variables: { get(name: string): unknown } }) =>
  JSON.parse(writeJson(null, context.variables.get('errs') as JToken, false));

describe('validate-content', () => {
  it('lets a body that conforms to the definition through and records no error', async () => {
    const { outcome, context } = await inbound(policy(json()), post('{"name":"Rex","age":3}'));
    expect(outcome.kind).toBe('forward');
    expect(errorsOf(context)).toEqual([]);
  });

  it('prevent: refuses a body that does not conform with 400, "Bad request" and the documented message', async () => {
    const { outcome, context } = await inbound(policy(json()), post('{\n  "age": -1\n}'));
    if (outcome.kind !== 'respond') throw new Error('expected a refusal');
    expect(outcome.response.status).toBe(400);
    expect(context.lastError?.reason).toBe('Bad request');
    const details =
      'Body of the request does not conform to the definition Pet, which is associated with the content type application/json.';
    expect(context.lastError?.message).toMatch(
      new RegExp(`^${details}\\n\\n.*required property 'name'.* Line: 1, Position: 1$`),
    );
    expect(JSON.parse(outcome.response.body.toString()).message).toContain(details);
    expect(errorsOf(context)).toEqual([
      {
        Name: 'application/json',
        Type: 'RequestBody',
        ValidationRule: 'IncorrectMessage',
        Details: context.lastError?.message,
        Action: 'prevent',
      },
    ]);
  });

  it('reports the line and position of the offending value', async () => {
    const { context } = await inbound(policy(json()), post('{\n  "name": "Rex",\n  "age": "three"\n}'));
    expect(context.lastError?.message).toMatch(/Property \/age must be integer\. Line: 3, Position: 10$/);
  });

  it('detect: records the error and lets the request through', async () => {
    const { outcome, context, services } = await inbound(policy(json('detect')), post('{}'));
    expect(outcome.kind).toBe('forward');
    expect(errorsOf(context)).toMatchObject([{ ValidationRule: 'IncorrectMessage', Action: 'detect' }]);
    expect(services.logs.some((line) => line.message === 'validation error')).toBe(true);
  });

  it('ignore: does not look at the body', async () => {
    const { outcome, context } = await inbound(policy(json('ignore')), post('{}'));
    expect(outcome.kind).toBe('forward');
    expect(errorsOf(context)).toEqual([]);
  });

  it('allow-additional-properties overrides the schema either way', async () => {
    const closed = await inbound(
      policy(json('prevent', 'allow-additional-properties="false"')),
      post('{"name":"a","x":1}'),
    );
    expect(closed.context.lastError?.message).toMatch(/must NOT have additional properties \("x"\)/);
    const strict = {
      ...definition,
      requestContent: [
        { contentType: 'application/json', schema: { ...OPEN_PET, additionalProperties: false } },
      ],
    };
    const open = await inbound(policy(json('prevent', 'allow-additional-properties="true"')), {
      ...post('{"name":"a","x":1}'),
      definition: strict,
    });
    expect(open.outcome.kind).toBe('forward');
    const asDefined = await inbound(policy(json()), { ...post('{"name":"a","x":1}'), definition: strict });
    expect(asDefined.outcome.kind).toBe('respond');
  });

  it('max-size: refuses a larger body with the SizeLimit error (Content-Length, else the length)', async () => {
    const big = `{"name":"${'x'.repeat(120)}"}`;
    const { outcome, context } = await inbound(policy(''), post(big));
    if (outcome.kind !== 'respond') throw new Error('expected a refusal');
    expect(outcome.response.status).toBe(400);
    expect(context.lastError?.message).toBe(
      `Request's body is ${big.length} bytes long and it exceeds the configured limit of 100 bytes.`,
    );
    expect(JSON.parse(outcome.response.body.toString()).message).toBe(
      `Request's body is ${big.length} bytes long and it exceeds the limit of 100 bytes.`,
    );
    const declared = await inbound(policy(''), {
      ...post('{"name":"a"}'),
      headers: [
        ['Content-Type', 'application/json'],
        ['Content-Length', '5000'],
      ],
    });
    expect(declared.context.lastError?.message).toMatch(/^Request's body is 5000 bytes long/);
    const detected = await inbound(
      policy('', '').replace('size-exceeded-action="prevent"', 'size-exceeded-action="detect"'),
      post(big),
    );
    expect(detected.outcome.kind).toBe('forward');
    expect(errorsOf(detected.context)).toMatchObject([{ Type: 'RequestBody', ValidationRule: 'SizeLimit' }]);
  });

  it('refuses a content type the definition does not specify (unspecified-content-type-action)', async () => {
    const { outcome, context } = await inbound(policy(json()), post('<a/>', 'application/xml'));
    if (outcome.kind !== 'respond') throw new Error('expected a refusal');
    expect(context.lastError?.message).toBe('Unspecified content type application/xml is not allowed.');
    expect(errorsOf(context)).toMatchObject([{ Name: 'application/xml', ValidationRule: 'Unspecified' }]);
    const ignored = await inbound(
      policy(json()).replace(
        'unspecified-content-type-action="prevent"',
        'unspecified-content-type-action="ignore"',
      ),
      post('<a/>', 'application/xml'),
    );
    expect(ignored.outcome.kind).toBe('forward');
  });

  it('content-type-map: from, when, missing-content-type-value and any-content-type-value choose the type validated', async () => {
    const map = (inner: string, attributes = '') =>
      `<content-type-map ${attributes}>${inner}</content-type-map>`;
    const hal = await inbound(
      policy(map('<type from="application/hal+json" to="application/json" />') + json()),
      post('{}', 'application/hal+json'),
    );
    expect(hal.context.lastError?.reason).toBe('Bad request');
    expect(hal.context.lastError?.message).toMatch(/^Body of the request does not conform/);
    const when = await inbound(
      policy(
        map(
          '<type when="@(context.Request.Headers.GetValueOrDefault("Content-Type","").Contains("json"))" to="application/json" />',
        ) + json(),
      ),
      post('{"name":"a"}', 'text/x-json'),
    );
    expect(when.outcome.kind).toBe('forward');
    const missing = await inbound(
      policy(map('', 'missing-content-type-value="application/json"') + json()),
      post('{"name":"a"}', undefined),
    );
    expect(missing.outcome.kind).toBe('forward');
    const any = await inbound(
      policy(map('', 'any-content-type-value="application/json"') + json()),
      post('{"name":"a"}', 'text/plain'),
    );
    expect(any.outcome.kind).toBe('forward');
  });

  it('a content element without a type validates every content type the definition specifies', async () => {
    const { context } = await inbound(policy('<content validate-as="json" action="prevent" />'), post('{}'));
    expect(context.lastError?.message).toMatch(/^Body of the request does not conform to the definition Pet/);
  });

  it('a body that is not JSON cannot be validated (ValidationException)', async () => {
    const { context, outcome } = await inbound(policy(json()), post('{not json'));
    if (outcome.kind !== 'respond') throw new Error('expected a refusal');
    expect(context.lastError?.message).toMatch(
      /^Body of the request cannot be validated for the content type application\/json\.\n\n/,
    );
    expect(JSON.parse(outcome.response.body.toString()).message).toBe(
      'The request could not be processed due to an internal error. Contact the API owner.',
    );
  });

  it('outbound: validates the response against its status, refusing with 502 and "Response not allowed"', async () => {
    const { response, context } = await outbound(
      policy(json()),
      { status: 200, headers: [['Content-Type', 'application/json']], body: '{"age":1}' },
      { definition },
    );
    expect(response.status).toBe(502);
    expect(context.lastError?.reason).toBe('Response not allowed');
    expect(context.lastError?.message).toMatch(/^Body of the response does not conform to the definition/);
    expect(JSON.parse(response.body.toString()).message).toBe(
      'The request could not be processed due to an internal error. Contact the API owner.',
    );
    const fine = await outbound(
      policy(json()),
      { status: 200, headers: [['Content-Type', 'application/json']], body: '{"name":"a"}' },
      { definition },
    );
    expect(fine.response.status).toBe(200);
  });

  it('checks JSON Schema and OpenAPI format keywords; a format it does not know is ignored', async () => {
    const formats = {
      'date-time': ['2024-05-01T10:00:00Z', '2024-05-01 10:00'],
      date: ['2024-02-29', '2023-02-29'],
      time: ['10:00:00Z', '25:00:00Z'],
      duration: ['P1DT2H', '1 day'],
      email: ['ada@example.com', 'ada.example.com'],
      hostname: ['api.example.com', 'api_.example..com'],
      uri: ['https://example.com/a?b=c', '/relative'],
      'uri-reference': ['/relative', 'http://exa mple.com'],
      uuid: ['0f8fad5b-d9cb-469f-a165-70867728950e', '0f8fad5b-d9cb-469f'],
      ipv4: ['192.0.2.1', '192.0.2.256'],
      ipv6: ['2001:db8::1', '2001:db8:::1'],
      int32: [2147483647, 2147483648],
      byte: ['aGVsbG8=', 'hello!'],
    } as const;
    const schema = {
      type: 'object',
      properties: {
        ...Object.fromEntries(
          Object.entries(formats).map(([format, [good]]) => [
            format,
            { type: typeof good === 'number' ? 'integer' : 'string', format },
          ]),
        ),
        other: { type: 'string', format: 'postal-code' },
      },
    };
    const withFormats = { ...definition, requestContent: [{ contentType: 'application/json', schema }] };
    const send = (body: Record<string, unknown>) =>
      inbound(policy(json(), '').replace('max-size="100"', 'max-size="10000"'), {
        ...post(JSON.stringify(body)),
        definition: withFormats,
      });
    const good = Object.fromEntries(Object.entries(formats).map(([format, [value]]) => [format, value]));
    expect((await send({ ...good, other: 'anything' })).outcome.kind).toBe('forward');
    for (const [format, [, bad]] of Object.entries(formats)) {
      const { context } = await send({ ...good, [format]: bad });
      expect(context.lastError?.message, format).toMatch(
        new RegExp(`\\n\\nProperty /${format} must match format "${format}"\\. Line: 1, Position: \\d+$`),
      );
    }
  });

  it('max-size from an expression, checked when it runs', async () => {
    const sized = (expression: string) =>
      policy(json()).replace('max-size="100"', `max-size="${expression}"`);
    const { context } = await inbound(sized('@(4 * 2)'), post('{"name":"Rex"}'));
    expect(errorsOf(context)).toMatchObject([{ ValidationRule: 'SizeLimit' }]);
    expect(context.lastError?.message).toMatch(/exceeds the configured limit of 8 bytes\.$/);
    const { context: wrong } = await inbound(sized('@(200000)'), post('{"name":"Rex"}'));
    expect(wrong.lastError?.reason).toBe('ExpressionValueEvaluationFailure');
    expect(wrong.lastError?.message).toMatch(/max-size must be an integer from 0 to 102400, got 200000/);
  });

  it('without an operation definition reports that the API schema does not exist', async () => {
    const { context } = await inbound(policy(json()), { ...post('{}'), definition: undefined });
    expect(context.lastError?.message).toBe("API's schema does not exist or it could not be resolved.");
  });

  it('refuses at load what it cannot run, and a max-size over 100 KB', () => {
    expect(diagnosticsOf(policy('<content validate-as="json" schema-ref="#/a" action="prevent" />'))).toEqual(
      [expect.stringContaining('schema-ref needs schema-id')],
    );
    expect(diagnosticsOf(policy('').replace('max-size="100"', 'max-size="102401"'))).toEqual([
      expect.stringContaining('max-size'),
    ]);
    expect(
      diagnosticsOf(policy('', '').replace('size-exceeded-action="prevent"', 'size-exceeded-action="block"')),
    ).toEqual([expect.stringContaining('size-exceeded-action')]);
  });

  describe("schema-id: a schema of the registry (the configuration's `schemas`)", () => {
    const registry = new Map<string, Record<string, unknown>>([
      [
        'orders',
        {
          components: {
            schemas: {
              order: {
                type: 'object',
                required: ['lines'],
                properties: { lines: { type: 'array', items: { $ref: '#/components/schemas/line' } } },
              },
              line: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' } } },
            },
          },
        },
      ],
      ['anything', { type: 'object', required: ['id'] }],
    ]);
    const compile = (statement: string) =>
      compilePolicyDocument(readPolicyDocument(policies({ inbound: statement }), { file: 'p.xml' }), {
        scope: 'operation',
        schemas: registry,
      });
    const run = async (statement: string, body: string, contentType = 'application/json') => {
      const pipeline = buildPipeline({ operation: compile(statement) });
      const runner = new PipelineRun(pipeline, request({ ...post(body, contentType) }), fakeServices());
      const outcome = await runner.onRequest();
      return { outcome, context: runner.context };
    };

    it('validates against the registered schema, for a content type the definition does not name', async () => {
      const statement = policy(
        '<content type="application/vnd.order+json" validate-as="json" schema-id="anything" action="prevent" />',
      );
      expect((await run(statement, '{"id":1}', 'application/vnd.order+json')).outcome.kind).toBe('forward');
      const refused = await run(statement, '{}', 'application/vnd.order+json');
      expect(refused.context.lastError?.message).toMatch(
        /^Body of the request does not conform to the definition request body, which is associated with the content type application\/vnd\.order\+json\./,
      );
    });

    it('schema-ref picks a part of the registered schema, whose own references still resolve', async () => {
      const statement = policy(
        '<content type="application/json" validate-as="json" schema-id="orders" schema-ref="#/components/schemas/order" action="prevent" />',
      );
      expect((await run(statement, '{"lines":[{"sku":"a"}]}')).outcome.kind).toBe('forward');
      const refused = await run(statement, '{"lines":[{"qty":1}]}');
      expect(refused.context.lastError?.message).toMatch(
        /Property \/lines\/0 must have required property 'sku'\./,
      );
    });

    it('refuses at load an id the registry does not have and a reference into nothing', () => {
      const problems = (statement: string) => {
        try {
          compile(statement);
          return [];
        } catch (error) {
          return (error as { diagnostics: { message: string }[] }).diagnostics.map((d) => d.message);
        }
      };
      expect(problems(policy('<content validate-as="json" schema-id="nope" action="prevent" />'))).toEqual([
        expect.stringContaining(
          'must name a schema of the configuration\'s schemas, got "nope" (known: orders, anything)',
        ),
      ]);
      expect(
        problems(
          policy(
            '<content validate-as="json" schema-id="orders" schema-ref="#/components/schemas/none" action="prevent" />',
          ),
        ),
      ).toEqual([expect.stringContaining('must be a local reference into schema "orders"')]);
    });
  });
});
