import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportError, type ImportedApi } from '../../../../src/catalog/importers/model.js';
import { importer, jsonLinePointers } from '../../../../src/catalog/importers/openapi.js';
import type { Diagnostic } from '../../../../src/diagnostic.js';

const fixtures = path.join(import.meta.dirname, '../../../fixtures/catalog', 'openapi');
const load = (name: string, options: { serviceUrl?: string; apiId?: string } = {}) =>
  importer.importFile(path.join(fixtures, name), { urlSuffix: 'api', ...options });
const operation = (api: ImportedApi, id: string) => {
  const found = api.operations.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no operation ${id} in ${api.operations.map((o) => o.id).join(', ')}`);
  return found;
};

const course = {
  type: 'object',
  required: ['id', 'title'],
  properties: {
    id: { type: 'integer' },
    title: { type: 'string', examples: ['Algebra'] },
    teacher: { type: ['string', 'null'] },
  },
};

describe('OpenAPI 3.0 (YAML, internal and external $refs)', () => {
  let api: ImportedApi;
  beforeAll(async () => {
    api = await load('courses-3.0.yaml');
  });

  it('takes the API from info and the backend from servers[0] with its variables at their defaults', () => {
    expect(api).toMatchObject({
      id: 'course-catalog',
      name: 'Course Catalog',
      description: 'Courses and their categories.',
      urlSuffix: 'api',
      serviceUrl: 'https://eu.courses.example.com/v1',
      type: 'http',
    });
    expect(api.operations.map((o) => `${o.method} ${o.urlTemplate} ${o.id}`)).toEqual([
      'GET /api/Course listCourses',
      'POST /api/Course createCourse',
      'GET /api/Course/{id} getCourse',
      'DELETE /api/Course/{id} delete-api-course-id',
      'GET /api/Category listCategories',
    ]);
  });

  it('maps query and header parameters, resolving a $ref parameter and leaving out Accept', () => {
    const list = operation(api, 'listCourses');
    expect(list.displayName).toBe('List courses');
    expect(list.description).toBe('Every course, optionally filtered.');
    expect(list.queryParameters).toEqual([
      {
        name: 'category',
        description: 'Only courses of this category.',
        required: false,
        type: 'string',
        schema: { type: 'string', enum: ['math', 'art'] },
      },
      {
        name: 'limit',
        description: 'At most this many.',
        required: false,
        type: 'integer',
        schema: { type: 'integer', minimum: 1, maximum: 100 },
      },
    ]);
    expect(list.headerParameters).toEqual([{ name: 'X-Tenant', required: true, type: 'string' }]);
  });

  it('prefers the JSON response and converts 3.0 schema keywords from the external file', () => {
    expect(operation(api, 'listCourses').responses).toEqual([
      {
        status: '200',
        description: 'The courses.',
        contentType: 'application/json',
        schema: { type: 'array', items: course },
        // Every media type, in the definition's order.
        content: [
          { contentType: 'application/xml', schema: { type: 'string' } },
          { contentType: 'application/json', schema: { type: 'array', items: course } },
        ],
      },
    ]);
  });

  it('keeps the request body schema from an external $ref, and responses from a $ref response', () => {
    const create = operation(api, 'createCourse');
    expect(create.requestBody).toEqual({
      type: 'object',
      required: ['title'],
      // Draft-4 style boolean exclusiveMinimum becomes the 2020-12 number form.
      properties: { title: { type: 'string' }, credits: { type: 'number', exclusiveMinimum: 0 } },
    });
    expect(create.requestBodyRequired).toBe(true);
    expect(create.requestContentType).toBe('application/json');
    expect(create.responses).toEqual([
      {
        status: '201',
        description: 'Created.',
        contentType: 'application/json',
        schema: course,
        content: [{ contentType: 'application/json', schema: course }],
      },
      { status: 'default', description: 'Something went wrong.' },
    ]);
  });

  it('merges path-level parameters, the operation-level one winning', () => {
    const get = operation(api, 'getCourse');
    expect(get.templateParameters).toEqual([
      {
        name: 'id',
        description: 'The course number.',
        required: true,
        type: 'integer',
        schema: { type: 'integer', format: 'int64' },
      },
    ]);
    expect(get.queryParameters).toEqual([{ name: 'verbose', required: false, type: 'boolean' }]);
    const remove = operation(api, 'delete-api-course-id');
    expect(remove.displayName).toBe('Delete a course');
    expect(remove.templateParameters).toEqual([
      { name: 'id', description: 'Path-level description.', required: true, type: 'integer' },
    ]);
  });

  it('turns a circular schema into a self-contained one with $defs', () => {
    const schema = operation(api, 'listCategories').responses[0]!.schema;
    expect(schema).toEqual({
      $ref: '#/$defs/Category',
      $defs: {
        Category: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/$defs/Category' } },
          },
        },
      },
    });
    // Plain data: it can be printed as YAML / JSON.
    expect(() => JSON.stringify(schema)).not.toThrow();
  });

  it('takes the API id, and a backend URL, from the options', async () => {
    const other = await load('courses-3.0.yaml', { apiId: 'catalog', serviceUrl: 'http://127.0.0.1:9000/' });
    expect(other.id).toBe('catalog');
    expect(other.serviceUrl).toBe('http://127.0.0.1:9000');
  });
});

describe('OpenAPI 3.1 (JSON, external JSON $ref)', () => {
  let api: ImportedApi;
  beforeAll(async () => {
    api = await load('library-3.1.json');
  });

  it('imports paths (not webhooks) with the server URL', () => {
    expect(api.serviceUrl).toBe('http://library.example.com:8081/api');
    expect(api.operations.map((o) => `${o.method} ${o.urlTemplate} ${o.id}`)).toEqual([
      'GET /books/{isbn} getBook',
      'PUT /books/{isbn} putBook',
    ]);
  });

  it('keeps 3.1 schemas as they are and takes parameter schemas from schema or content', () => {
    const get = operation(api, 'getBook');
    expect(get.templateParameters).toEqual([
      {
        name: 'isbn',
        required: true,
        type: 'string',
        schema: { type: 'string', pattern: '^[0-9-]{10,17}$' },
      },
    ]);
    expect(get.queryParameters).toEqual([
      {
        name: 'fields',
        required: false,
        type: 'string',
        schema: { type: 'array', items: { type: 'string' } },
      },
      { name: 'filter', required: false, type: 'string', schema: { type: 'object' } },
    ]);
    expect(get.responses[0]!.schema).toEqual({
      type: 'object',
      required: ['isbn', 'title'],
      properties: {
        isbn: { type: 'string' },
        title: { type: 'string' },
        subtitle: { type: ['string', 'null'] },
        year: { type: 'integer', exclusiveMinimum: 1400, examples: [1999] },
      },
    });
    expect(get.responses[1]).toEqual({ status: '4XX', description: 'Client error.' });
  });

  it('accepts a +json media type for the request body', () => {
    const put = operation(api, 'putBook');
    expect(put.requestContentType).toBe('application/merge-patch+json');
    expect(put.requestBodyRequired).toBe(false);
    expect(put.requestBody).toMatchObject({ type: 'object', required: ['isbn', 'title'] });
  });
});

describe('Swagger 2.0 (JSON with an external YAML $ref)', () => {
  let api: ImportedApi;
  beforeAll(async () => {
    api = await load('petstore-2.0.json');
  });

  it('builds the backend from schemes (https preferred), host and basePath', () => {
    expect(api).toMatchObject({ id: 'swagger-petstore', serviceUrl: 'https://petstore.example.com/v2' });
  });

  it('maps the body parameter to the request body, with x-nullable and example converted', () => {
    const add = operation(api, 'addPet');
    expect(add.requestBody).toEqual({
      type: 'object',
      required: ['name'],
      properties: {
        id: { type: 'integer', format: 'int64' },
        name: { type: 'string', examples: ['doggie'] },
        category: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } },
        tag: { type: ['string', 'null'] },
      },
    });
    expect(add.requestBodyRequired).toBe(true);
    expect(add.requestContentType).toBe('application/json');
  });

  it('maps path-level path parameters, headers and response schemas with produces', () => {
    const get = operation(api, 'getPetById');
    expect(get.templateParameters).toEqual([
      { name: 'petId', required: true, type: 'integer', schema: { type: 'integer', format: 'int64' } },
    ]);
    expect(get.headerParameters).toEqual([{ name: 'api_key', required: false, type: 'string' }]);
    expect(get.responses[0]).toMatchObject({ status: '200', contentType: 'application/json' });
    expect(get.responses[0]!.schema).toMatchObject({ type: 'object', required: ['name'] });
  });

  it('turns formData parameters into a form body schema', () => {
    const form = operation(api, 'updatePetWithForm');
    expect(form.requestContentType).toBe('application/x-www-form-urlencoded');
    expect(form.requestBodyRequired).toBe(true);
    expect(form.requestBody).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'New name' },
        status: { type: 'string', enum: ['available', 'sold'] },
      },
      required: ['name'],
    });
  });

  it('keeps the items of an array query parameter in its schema', () => {
    expect(operation(api, 'findPetsByTags').queryParameters).toEqual([
      { name: 'tags', required: true, type: 'string', schema: { type: 'array', items: { type: 'string' } } },
    ]);
  });

  it('needs --service-url when there is no host (YAML)', async () => {
    const problems = await failure(() => load('relative-server-2.0.yaml'));
    expect(problems).toEqual([
      {
        file: path.join(fixtures, 'relative-server-2.0.yaml'),
        line: 1,
        column: 1,
        path: '/host',
        message: 'no absolute backend URL (host); pass --service-url',
      },
    ]);
    const api = await load('relative-server-2.0.yaml', { serviceUrl: 'http://127.0.0.1:8081/v1' });
    expect(api.serviceUrl).toBe('http://127.0.0.1:8081/v1');
    expect(api.operations).toMatchObject([{ id: 'get-ping', method: 'GET', urlTemplate: '/ping' }]);
  });
});

async function failure(run: () => Promise<unknown>): Promise<readonly Diagnostic[]> {
  const error = await run().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ImportError)) throw new Error(`expected an ImportError, got ${String(error)}`);
  return error.problems;
}

/**
 * mock-response answers from the responses' examples and schemas
 * (learn.microsoft.com/azure/api-management/mock-response-policy): every media type is kept, with its example.
 */
describe('response examples for mock-response', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'portcullis-openapi-examples-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });
  const load = async (name: string, document: unknown) => {
    const file = path.join(folder, name);
    await writeFile(file, JSON.stringify(document));
    return importer.importFile(file, { urlSuffix: 'a', serviceUrl: 'https://backend.example.com' });
  };

  it('OpenAPI 3: every media type, its example or the first of its named examples (a $ref one resolved)', async () => {
    const api = await load('three.json', {
      openapi: '3.0.3',
      info: { title: 'Ex', version: '1' },
      paths: {
        '/a': {
          get: {
            operationId: 'a',
            responses: {
              '200': {
                description: 'ok',
                content: {
                  'text/plain': { example: 'hello' },
                  'application/json': {
                    schema: { type: 'object', properties: { n: { type: 'integer', example: 3 } } },
                    examples: {
                      remote: { externalValue: 'https://x.example/a.json' },
                      one: { $ref: '#/components/examples/One' },
                    },
                  },
                },
              },
            },
          },
        },
      },
      components: { examples: { One: { value: { n: 1 } } } },
    });
    expect(api.operations[0]!.responses[0]!.content).toEqual([
      { contentType: 'text/plain', example: 'hello' },
      {
        contentType: 'application/json',
        // 3.0's schema `example` becomes 2020-12 `examples`, which the schema sample reads.
        schema: { type: 'object', properties: { n: { type: 'integer', examples: [3] } } },
        example: { n: 1 },
      },
    ]);
  });

  it('Swagger 2.0: the schema for every media type produced, examples by media type', async () => {
    const api = await load('two.json', {
      swagger: '2.0',
      info: { title: 'Ex', version: '1' },
      host: 'backend.example.com',
      produces: ['application/json', 'application/xml'],
      paths: {
        '/a': {
          get: {
            operationId: 'a',
            responses: {
              '200': {
                description: 'ok',
                schema: { type: 'string' },
                examples: { 'application/json': 'j', 'text/csv': 'a,b' },
              },
            },
          },
        },
      },
    });
    expect(api.operations[0]!.responses[0]!.content).toEqual([
      { contentType: 'application/json', schema: { type: 'string' }, example: 'j' },
      { contentType: 'application/xml', schema: { type: 'string' } },
      { contentType: 'text/csv', schema: { type: 'string' }, example: 'a,b' },
    ]);
  });
});

describe('invalid OpenAPI definitions', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'portcullis-openapi-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });
  const write = async (name: string, text: string) => {
    const file = path.join(folder, name);
    await writeFile(file, text);
    return file;
  };
  const header = "openapi: 3.0.3\ninfo:\n  title: Bad\n  version: '1'\n";
  const ok = "      responses:\n        '200':\n          description: ok\n";

  it('reports a YAML syntax error at its line and column', async () => {
    const file = await write('syntax.yaml', `${header}paths:\n  /a: [unclosed\n`);
    const [problem] = await failure(() => importer.importFile(file, { urlSuffix: 'a' }));
    expect(problem).toMatchObject({ file, line: 7 });
    expect(problem!.message).toMatch(/flow sequence|Missing , or : between flow|end with a \]/i);
  });

  it('reports a JSON syntax error at its line and column', async () => {
    const file = await write('syntax.json', '{\n  "openapi": "3.1.0"\n  "info": { "title": "x" }\n}\n');
    const [problem] = await failure(() => importer.importFile(file, { urlSuffix: 'a' }));
    expect(problem).toMatchObject({ file, line: 3 });
  });

  it('places a schema violation at the YAML node, with its JSON pointer', async () => {
    const file = await write(
      'schema.yaml',
      `${header}servers:\n  - urll: http://x\npaths:\n  /a:\n    get:\n${ok}`,
    );
    expect(await failure(() => importer.importFile(file, { urlSuffix: 'a' }))).toEqual([
      {
        file,
        line: 6,
        column: 5,
        path: '/servers/0',
        message: "must have required property 'url' (url is missing here!)",
      },
    ]);
  });

  it('places a missing path parameter at the operation', async () => {
    const file = await write('params.yaml', `${header}paths:\n  /a/{id}:\n    get:\n${ok}`);
    expect(await failure(() => importer.importFile(file, { urlSuffix: 'a' }))).toEqual([
      {
        file,
        line: 7,
        column: 5,
        path: '/paths/~1a~1{id}/get',
        message: '`/paths/a/{id}/get` is missing path parameter(s) for `{id}`.',
      },
    ]);
  });

  it('places a $ref to nothing where the $ref is written', async () => {
    const file = await write(
      'ref.yaml',
      `${header}paths:\n  /a:\n    get:\n      parameters:\n        - name: q\n          in: query\n          schema:\n            $ref: '#/components/schemas/Nope'\n${ok}`,
    );
    const [problem] = await failure(() => importer.importFile(file, { urlSuffix: 'a' }));
    expect(problem).toMatchObject({ file, line: 12, column: 19 });
    expect(problem!.message).toContain('Missing $ref pointer "#/components/schemas/Nope"');
  });

  it('places a violation inside an external file at its line in that file', async () => {
    const file = await write(
      'main.yaml',
      `${header}paths:\n  /a:\n    get:\n      responses:\n        '200':\n          $ref: 'responses.yaml#/Ok'\n`,
    );
    await write(
      'responses.yaml',
      'Ok:\n  description: ok\n  content:\n    application/json:\n      schema:\n        type: array\n',
    );
    expect(await failure(() => importer.importFile(file, { urlSuffix: 'a' }))).toEqual([
      {
        file: path.join(folder, 'responses.yaml'),
        line: 5,
        column: 7,
        path: '/paths/~1a/get/responses/200/content/application~1json/schema',
        message:
          '`/paths/a/get/responses/200/content/application/json/schema` is an array, so it must include an `items` schema.',
      },
    ]);
  });

  it('places a missing external file at the $ref that names it', async () => {
    const file = await write(
      'external.yaml',
      `${header}paths:\n  /a:\n    get:\n      responses:\n        '200':\n          $ref: 'missing.yaml#/X'\n`,
    );
    const [problem] = await failure(() => importer.importFile(file, { urlSuffix: 'a' }));
    expect(problem).toMatchObject({ file, line: 10, column: 17 });
    expect(problem!.message).toMatch(/^Error opening file .*missing\.yaml: ENOENT/);
  });

  it('reports a syntax error in an external file at its line there', async () => {
    const file = await write(
      'uses-broken.yaml',
      `${header}paths:\n  /a:\n    get:\n      responses:\n        '200':\n          $ref: 'broken.yaml#/Ok'\n`,
    );
    await write('broken.yaml', 'Ok:\n  description: [x\n');
    const [problem] = await failure(() => importer.importFile(file, { urlSuffix: 'a' }));
    expect(problem).toMatchObject({ file: path.join(folder, 'broken.yaml'), line: 3, column: 1 });
  });

  it('refuses a path the gateway cannot use as a URL template', async () => {
    const file = await write(
      'template.yaml',
      `${header}servers:\n  - url: http://x\npaths:\n  /a/{user.id}:\n    get:\n      parameters:\n        - { name: user.id, in: path, required: true, schema: { type: string } }\n${ok}`,
    );
    expect(await failure(() => importer.importFile(file, { urlSuffix: 'a' }))).toEqual([
      {
        file,
        line: 8,
        column: 3,
        path: '/paths/~1a~1{user.id}',
        message: 'malformed segment "{user.id}" in URL template "/a/{user.id}"',
      },
    ]);
  });

  it('refuses a document that is not OpenAPI or an unsupported version', async () => {
    const none = await write('none.yaml', 'title: hello\n');
    expect((await failure(() => importer.importFile(none, { urlSuffix: 'a' })))[0]!.message).toBe(
      'neither "openapi" nor "swagger" is set: not an OpenAPI or Swagger document',
    );
    const old = await write('old.yaml', "swagger: '1.2'\n");
    expect(await failure(() => importer.importFile(old, { urlSuffix: 'a' }))).toEqual([
      {
        file: old,
        line: 1,
        column: 1,
        path: '/swagger',
        message: 'unsupported version "1.2" (supported: OpenAPI 3.0, 3.1, Swagger 2.0)',
      },
    ]);
  });

  it('names a file that does not exist', async () => {
    const file = path.join(folder, 'nope.yaml');
    expect(await failure(() => importer.importFile(file, { urlSuffix: 'a' }))).toEqual([
      { file, message: 'cannot read the file (ENOENT)' },
    ]);
  });
});

describe('jsonLinePointers', () => {
  it('gives the JSON pointer of every line of JSON.stringify(value, null, 2)', () => {
    const value = { a: { b: [1, { c: 2 }], e: {} }, 'x/y': [] };
    const text = JSON.stringify(value, null, 2).split('\n');
    const pointers = jsonLinePointers(value);
    expect(pointers).toHaveLength(text.length);
    expect(text.map((line, index) => `${pointers[index]} ${line.trim()}`)).toEqual([
      ' {',
      '/a "a": {',
      '/a/b "b": [',
      '/a/b/0 1,',
      '/a/b/1 {',
      '/a/b/1/c "c": 2',
      '/a/b/1 }',
      '/a/b ],',
      '/a/e "e": {}',
      '/a },',
      '/x~1y "x/y": []',
      ' }',
    ]);
  });
});

/**
 * What the validation policies check against (learn.microsoft.com/azure/api-management/validate-content-policy,
 * validate-headers-policy): every media type of the request body with its schema, and the response headers.
 */
describe('request media types and response headers for the validation policies', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'portcullis-openapi-validation-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });
  const load = async (name: string, document: unknown) => {
    const file = path.join(folder, name);
    await writeFile(file, JSON.stringify(document));
    return importer.importFile(file, { urlSuffix: 'a', serviceUrl: 'https://backend.example.com' });
  };

  it('OpenAPI 3: every request media type, and each response header with its schema', async () => {
    const api = await load('three.json', {
      openapi: '3.0.3',
      info: { title: 'Ex', version: '1' },
      paths: {
        '/a': {
          post: {
            operationId: 'a',
            requestBody: {
              content: {
                'application/json': { schema: { type: 'object', required: ['n'] } },
                'application/xml': {},
              },
            },
            responses: {
              '200': {
                description: 'ok',
                headers: {
                  'X-Rate': { required: true, schema: { type: 'integer', maximum: 10 } },
                  ETag: { schema: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    });
    const operation = api.operations[0]!;
    expect(operation.requestContent).toEqual([
      { contentType: 'application/json', schema: { type: 'object', required: ['n'] } },
      { contentType: 'application/xml' },
    ]);
    expect(operation.responses[0]!.headers).toEqual([
      { name: 'X-Rate', required: true, type: 'integer', schema: { type: 'integer', maximum: 10 } },
      { name: 'ETag', required: false, type: 'string' },
    ]);
  });

  it('Swagger 2.0: the body schema for every media type consumed, and response headers by their keywords', async () => {
    const api = await load('two.json', {
      swagger: '2.0',
      info: { title: 'Ex', version: '1' },
      host: 'backend.example.com',
      consumes: ['application/json', 'text/json'],
      paths: {
        '/a': {
          post: {
            operationId: 'a',
            parameters: [{ in: 'body', name: 'b', schema: { type: 'object' } }],
            responses: { '201': { description: 'made', headers: { Location: { type: 'string' } } } },
          },
        },
      },
    });
    const operation = api.operations[0]!;
    expect(operation.requestContent).toEqual([
      { contentType: 'application/json', schema: { type: 'object' } },
      { contentType: 'text/json', schema: { type: 'object' } },
    ]);
    expect(operation.responses[0]!.headers).toEqual([{ name: 'Location', required: false, type: 'string' }]);
  });
});
