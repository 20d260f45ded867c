import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportError, type ImportedApi } from '../../../../src/catalog/importers/model.js';
import { importer } from '../../../../src/catalog/importers/wadl.js';
import type { Diagnostic } from '../../../../src/diagnostic.js';

const fixture = path.join(import.meta.dirname, '../../../fixtures/catalog', 'wadl', 'courses.wadl');

describe('WADL', () => {
  let api: ImportedApi;
  beforeAll(async () => {
    api = await importer.importFile(fixture, { urlSuffix: 'school' });
  });
  const operation = (id: string) => api.operations.find((candidate) => candidate.id === id)!;

  it('takes the name from the application doc and the backend from resources/@base', () => {
    expect(api).toMatchObject({
      id: 'course-service',
      name: 'Course Service',
      description: 'Courses, students and grades.',
      urlSuffix: 'school',
      serviceUrl: 'https://courses.example.com/rest',
      type: 'http',
    });
  });

  it('joins nested resource paths into templates, following resource types and method references', () => {
    expect(api.operations.map((o) => `${o.method} ${o.urlTemplate} ${o.id}`)).toEqual([
      'GET /courses listCourses',
      'POST /courses createCourse',
      'GET /courses/{courseId} getOne',
      'DELETE /courses/{courseId}/students/{studentId} delete-courses-courseid-students-studentid',
      'GET /courses/{courseId}/grades listGrades',
    ]);
  });

  it('maps query parameters with xsd types, options and typed defaults, and resource header parameters', () => {
    const list = operation('listCourses');
    expect(list.displayName).toBe('List courses');
    expect(list.description).toBe('Every course.');
    expect(list.queryParameters).toEqual([
      { name: 'page', required: false, type: 'integer', schema: { type: 'integer', default: 1 } },
      {
        name: 'level',
        required: false,
        type: 'string',
        schema: { type: 'string', enum: ['beginner', 'advanced'] },
      },
    ]);
    expect(list.headerParameters).toEqual([{ name: 'X-Tenant', required: true, type: 'string' }]);
    expect(list.responses).toEqual([{ status: '200', contentType: 'application/json' }]);
  });

  it('declares template parameters (JAX-RS regular expressions stripped) on every nested method', () => {
    const courseId = { name: 'courseId', description: 'The course number.', required: true, type: 'integer' };
    expect(operation('getOne').templateParameters).toEqual([courseId]);
    expect(operation('delete-courses-courseid-students-studentid').templateParameters).toEqual([
      courseId,
      { name: 'studentId', required: true, type: 'string' },
    ]);
  });

  it("combines the resource type's query parameters with the referenced method's own", () => {
    const get = operation('getOne');
    expect(get.displayName).toBe('Get one');
    expect(get.queryParameters).toEqual([
      { name: 'term', required: false, type: 'string' },
      { name: 'verbose', required: false, type: 'boolean' },
    ]);
    expect(operation('listGrades').queryParameters).toEqual([
      { name: 'tag', required: false, type: 'string', schema: { type: 'array', items: { type: 'string' } } },
    ]);
  });

  it('keeps the request media type and one response per listed status', () => {
    const create = operation('createCourse');
    expect(create.requestContentType).toBe('application/json');
    expect(create.responses).toEqual([
      { status: '201', description: 'Accepted.' },
      { status: '202', description: 'Accepted.' },
      { status: '400' },
    ]);
  });
});

describe('invalid WADL', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'portcullis-wadl-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });
  const problemsOf = async (text: string, serviceUrl?: string): Promise<readonly Diagnostic[]> => {
    const file = path.join(folder, 'api.wadl');
    await writeFile(file, text);
    const error = await importer
      .importFile(file, { urlSuffix: 'a', ...(serviceUrl ? { serviceUrl } : {}) })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    if (!(error instanceof ImportError)) throw new Error(`expected an ImportError, got ${String(error)}`);
    return error.problems.map((problem) => ({ ...problem, file: path.basename(problem.file) }));
  };
  const wadl = (body: string) =>
    `<application xmlns="http://wadl.dev.java.net/2009/02">\n${body}\n</application>\n`;

  it('refuses a DOCTYPE (no entities, no external entities)', async () => {
    expect(
      await problemsOf(
        '<?xml version="1.0"?>\n<!DOCTYPE a [ <!ENTITY x SYSTEM "file:///etc/passwd"> ]>\n<application xmlns="http://wadl.dev.java.net/2009/02">&x;</application>\n',
      ),
    ).toEqual([
      { file: 'api.wadl', line: 2, column: 1, message: 'a DOCTYPE is not allowed (no DTDs or entities)' },
    ]);
  });

  it('reports malformed XML at its line and column', async () => {
    expect(await problemsOf(wadl('  <resources base="http://x/">\n  </resource>'))).toEqual([
      {
        file: 'api.wadl',
        line: 3,
        column: 3,
        message: '</resource> does not close <resources>, which is open since 2:3',
      },
    ]);
  });

  it('reports every bad method and template with its element path, and imports nothing', async () => {
    const problems = await problemsOf(
      wadl(`  <resources base="http://x/">
    <resource path="a">
      <method name="FETCH"/>
      <method href="#missing"/>
      <method href="other.wadl#m"/>
      <resource path="{a.b}"><method name="GET"/></resource>
    </resource>
  </resources>`),
    );
    expect(problems).toEqual([
      {
        file: 'api.wadl',
        line: 4,
        column: 7,
        path: 'application/resources[1]/resource[1]/method[1]',
        message: 'method name "FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE',
      },
      {
        file: 'api.wadl',
        line: 5,
        column: 7,
        path: 'application/resources[1]/resource[1]/method[2]',
        message: 'no <method id="missing"> in this document',
      },
      {
        file: 'api.wadl',
        line: 6,
        column: 7,
        path: 'application/resources[1]/resource[1]/method[3]',
        message: 'reference "other.wadl#m" to another document is not supported; use "#id" within this file',
      },
      {
        file: 'api.wadl',
        line: 7,
        column: 30,
        path: 'application/resources[1]/resource[1]/resource[1]/method[1]',
        message: 'malformed segment "{a.b}" in URL template "/a/{a.b}"',
      },
    ]);
  });

  it('refuses a parameter without a name', async () => {
    const text = wadl(
      '  <resources base="http://x/"><resource path="a">\n    <method name="GET"><request><param style="query"/></request></method>\n  </resource></resources>',
    );
    expect(await problemsOf(text)).toEqual([
      {
        file: 'api.wadl',
        line: 3,
        column: 33,
        path: 'application/resources[1]/resource[1]/method[1]/request[1]/param[1]',
        message: 'param needs a name="…"',
      },
    ]);
  });

  it('needs an absolute base URL or --service-url', async () => {
    const text = wadl(
      '  <resources base="/rest"><resource path="a"><method name="GET"/></resource></resources>',
    );
    expect(await problemsOf(text)).toEqual([
      {
        file: 'api.wadl',
        line: 2,
        column: 3,
        path: 'application/resources[1]',
        message: 'base "/rest" is not an absolute http(s) URL; pass --service-url',
      },
    ]);
    const file = path.join(folder, 'api.wadl');
    const api = await importer.importFile(file, { urlSuffix: 'a', serviceUrl: 'http://127.0.0.1:8081/rest' });
    expect(api.serviceUrl).toBe('http://127.0.0.1:8081/rest');
    expect(api.operations).toMatchObject([{ method: 'GET', urlTemplate: '/a' }]);
  });

  it('refuses a document that is not WADL', async () => {
    expect(await problemsOf('<definitions xmlns="http://schemas.xmlsoap.org/wsdl/"/>')).toEqual([
      {
        file: 'api.wadl',
        line: 1,
        column: 1,
        path: 'definitions',
        message:
          'expected a WADL <application> (http://wadl.dev.java.net/2009/02), found <definitions> in "http://schemas.xmlsoap.org/wsdl/"',
      },
    ]);
  });
});
