import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { UsageError } from '../../../../src/cli/command.js';
import { command } from '../../../../src/cli/commands/import.js';
import { parseConfig } from '../../../../src/config/load.js';

const fixtures = path.join(import.meta.dirname, '../../../fixtures/catalog');

const gateway = `# The test gateway: comments and layout must survive an import.
gateway:
  http: { host: 127.0.0.1, port: 8080 }

apis:
  # Hand-written API, left alone.
  - id: courses
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:8081
    operations:
      - { id: list, method: GET, urlTemplate: /api/Course }

  - id: pets
    urlSuffix: pets
    serviceUrl: http://127.0.0.1:8082
    policy: policies/pets.xml # added by hand
    operations:
      - id: getPetById
        method: GET
        urlTemplate: /pet/{petId}
        policy: policies/get-pet.xml
      - { id: gone, method: GET, urlTemplate: /gone }

products:
  - { id: shop, apis: [courses, pets] }
`;

describe('portcullis import', () => {
  let folder: string;
  let file: string;
  let stdout: string;
  let stderr: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'portcullis-import-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });
  beforeEach(async () => {
    file = path.join(folder, 'gateway.yaml');
    await writeFile(file, gateway);
    stdout = '';
    stderr = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints the API as an apis: entry that the configuration accepts', async () => {
    const code = await command.run([
      'openapi',
      path.join(fixtures, 'openapi', 'courses-3.0.yaml'),
      '--suffix',
      'catalog',
    ]);
    expect(code).toBe(0);
    const printed = parseYaml(stdout) as { apis: Record<string, unknown>[] };
    expect(printed.apis).toHaveLength(1);
    expect(printed.apis[0]).toMatchObject({
      id: 'course-catalog',
      name: 'Course Catalog',
      urlSuffix: 'catalog',
      serviceUrl: 'https://eu.courses.example.com/v1',
    });
    const operations = printed.apis[0]!.operations as Record<string, unknown>[];
    expect(operations.map((operation) => operation.id)).toEqual([
      'listCourses',
      'createCourse',
      'getCourse',
      'delete-api-course-id',
      'listCategories',
    ]);
    expect(operations[0]).toMatchObject({
      method: 'GET',
      urlTemplate: '/api/Course',
      displayName: 'List courses',
      queryParameters: [
        { name: 'category', description: 'Only courses of this category.', type: 'string' },
        { name: 'limit', description: 'At most this many.', type: 'integer' },
      ],
      headerParameters: [{ name: 'X-Tenant', type: 'string', required: true }],
    });
    expect(operations[1]).toMatchObject({
      requestBody: { type: 'object', required: ['title'] },
    });
    // The printed text is itself a valid gateway configuration.
    const config = parseConfig(stdout, 'printed.yaml');
    expect(config.apis[0]!.operations).toHaveLength(5);
  });

  it('adds the API to a gateway file, keeping its comments, and the result loads', async () => {
    const code = await command.run([
      'wadl',
      path.join(fixtures, 'wadl', 'courses.wadl'),
      '--suffix',
      'school',
      '--api-id',
      'school',
      '--config',
      file,
    ]);
    expect(code).toBe(0);
    expect(stdout).toBe(`added API "school" (5 operations) in ${file}\n`);
    const text = await readFile(file, 'utf8');
    expect(text.startsWith(gateway.split('\nproducts:')[0]!.trimEnd())).toBe(true);
    expect(text).toContain('# Hand-written API, left alone.');
    expect(text).toContain('policy: policies/pets.xml # added by hand');
    const config = parseConfig(text, file);
    expect(config.apis.map((api) => api.id)).toEqual(['courses', 'pets', 'school']);
    const school = config.apis[2]!;
    expect(school.serviceUrl).toBe('https://courses.example.com/rest');
    expect(school.operations.map((operation) => `${operation.method} ${operation.urlTemplate}`)).toEqual([
      'GET /courses',
      'POST /courses',
      'GET /courses/{courseId}',
      'DELETE /courses/{courseId}/students/{studentId}',
      'GET /courses/{courseId}/grades',
    ]);
    expect(config.products).toEqual([{ id: 'shop', apis: ['courses', 'pets'], subscriptionRequired: true }]);
  });

  it('creates a gateway file that does not exist yet, holding the API, and it loads', async () => {
    const created = path.join(folder, 'new-gateway.yaml');
    await rm(created, { force: true });
    const code = await command.run([
      'wadl',
      path.join(fixtures, 'wadl', 'courses.wadl'),
      '--suffix',
      'school',
      '--api-id',
      'school',
      '--config',
      created,
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(`created ${created} with API "school" (5 operations)\n`);
    const config = parseConfig(await readFile(created, 'utf8'), created);
    expect(config.apis.map((api) => api.id)).toEqual(['school']);
    expect(config.apis[0]!.operations).toHaveLength(5);
  });

  it('says so when a definition has nothing to serve: webhooks only, no paths', async () => {
    const definition = path.join(folder, 'webhooks.yaml');
    await writeFile(
      definition,
      [
        'openapi: 3.1.0',
        'info: { title: Pet events, version: "1" }',
        'servers: [{ url: "https://pets.example.com" }]',
        'webhooks:',
        '  newPet:',
        '    post:',
        '      requestBody: { content: { application/json: { schema: { type: object } } } }',
        '      responses: { "200": { description: received } }',
      ].join('\n'),
    );
    const code = await command.run(['openapi', definition, '--suffix', 'events']);
    expect(code).toBe(0);
    expect(stderr).toBe(
      [
        `portcullis import: ${definition}: webhooks not imported (newPet): they are requests the API sends to its subscribers, not requests it serves`,
        `portcullis import: ${definition} declares no operations: the API is imported with none, and every call to it gets 404 until it has some`,
        '',
      ].join('\n'),
    );
    expect((parseYaml(stdout) as { apis: { operations: unknown[] }[] }).apis[0]!.operations).toEqual([]);
  });

  it('replaces an API with the same id, keeping its policies and operation policies by id', async () => {
    const code = await command.run([
      'openapi',
      path.join(fixtures, 'openapi', 'petstore-2.0.json'),
      '--suffix',
      'pets',
      '--api-id',
      'pets',
      '--service-url',
      'http://127.0.0.1:8082/v2',
      '--config',
      file,
    ]);
    expect(code).toBe(0);
    expect(stdout).toBe(`replaced API "pets" (4 operations) in ${file}\n`);
    const text = await readFile(file, 'utf8');
    const config = parseConfig(text, file);
    expect(config.apis.map((api) => api.id)).toEqual(['courses', 'pets']);
    const pets = config.apis[1]!;
    expect(pets).toMatchObject({
      name: 'Swagger Petstore',
      serviceUrl: 'http://127.0.0.1:8082/v2',
      policy: 'policies/pets.xml',
    });
    expect(pets.operations.map((operation) => [operation.id, operation.policy])).toEqual([
      ['addPet', undefined],
      ['getPetById', 'policies/get-pet.xml'],
      ['updatePetWithForm', undefined],
      ['findPetsByTags', undefined],
    ]);
    expect(text).toContain('# Hand-written API, left alone.');
  });

  it('imports a WSDL as POST / operations of the SOAP endpoint', async () => {
    const code = await command.run([
      'wsdl',
      path.join(fixtures, 'wsdl', 'calculator-1.1.wsdl'),
      '--suffix',
      'calc',
      '--config',
      file,
    ]);
    expect(code).toBe(0);
    const calculator = parseConfig(await readFile(file, 'utf8'), file).apis.find(
      (api) => api.id === 'calculator',
    );
    expect(calculator).toMatchObject({
      urlSuffix: 'calc',
      serviceUrl: 'http://calc.example.com/calculator.asmx',
      operations: [
        { id: 'Add', method: 'POST', urlTemplate: '/', description: 'Adds two integers.' },
        { id: 'Ping', method: 'POST', urlTemplate: '/' },
      ],
    });
  });

  it('refuses a result the configuration rejects, naming the place, and leaves the file alone', async () => {
    const code = await command.run([
      'openapi',
      path.join(fixtures, 'openapi', 'library-3.1.json'),
      '--suffix',
      'courses',
      '--config',
      file,
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `${file}:25:5: apis[2].urlSuffix: URL suffix "courses" is already used by apis[0] on the same hosts`,
    );
    expect(await readFile(file, 'utf8')).toBe(gateway);
  });

  it('reports an invalid definition with file:line:col and writes nothing', async () => {
    const bad = path.join(folder, 'bad.yaml');
    await writeFile(
      bad,
      "openapi: 3.0.3\ninfo:\n  title: Bad\n  version: '1'\npaths:\n  /a/{id}:\n    get:\n      responses:\n        '200':\n          description: ok\n",
    );
    const code = await command.run(['openapi', bad, '--suffix', 'bad', '--config', file]);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `${bad}:7:5: /paths/~1a~1{id}/get: \`/paths/a/{id}/get\` is missing path parameter(s) for \`{id}\`.\n`,
    );
    expect(stdout).toBe('');
    expect(await readFile(file, 'utf8')).toBe(gateway);
  });

  it('refuses to touch a gateway file that is already invalid', async () => {
    const broken = path.join(folder, 'broken.yaml');
    await copyFile(file, broken);
    await writeFile(broken, `${gateway}unknownKey: 1\n`);
    const code = await command.run([
      'wsdl',
      path.join(fixtures, 'wsdl', 'calculator-1.1.wsdl'),
      '--suffix',
      'c',
      '--config',
      broken,
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${broken}:26:1: unknownKey: unknown key "unknownKey"\n`);
    expect(await readFile(broken, 'utf8')).toBe(`${gateway}unknownKey: 1\n`);
  });

  it('explains usage mistakes', async () => {
    await expect(command.run(['swagger', 'x.json', '--suffix', 'a'])).rejects.toThrow(
      new UsageError('give the format first: openapi, wadl, wsdl, apiops'),
    );
    await expect(command.run(['openapi', 'x.json'])).rejects.toThrow(
      new UsageError('--suffix is required (where the API is published)'),
    );
    await expect(command.run(['openapi', '--suffix', 'a'])).rejects.toThrow(
      new UsageError('give the definition file'),
    );
  });
});
