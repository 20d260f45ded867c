import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { configToolCatalog } from '../../../src/service/catalog.js';

const config = parseConfig(
  `apis:
  - id: courses
    name: Course API
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:1
    operations:
      - id: list-courses
        method: GET
        urlTemplate: /api/Course
        displayName: List courses
        description: Every course.
        queryParameters: [{ name: courseID, type: integer, description: one course, required: true }]
        headerParameters: [{ name: X-Trace }]
      - method: POST
        urlTemplate: /api/Course
        requestBody: { type: object, required: [title] }
  - id: hidden
    urlSuffix: hidden
    serviceUrl: http://127.0.0.1:1
    operations: [{ method: GET, urlTemplate: /x }]
products:
  - { id: courses, apis: [courses] }
  - { id: teaching, apis: [courses] }
`,
  'gw.yaml',
);

describe('configToolCatalog', () => {
  const operations = configToolCatalog(config).operations();

  it('turns each operation into a ToolOperation with its products, parameters and body schema', () => {
    expect(operations[0]).toEqual({
      apiId: 'courses',
      apiName: 'Course API',
      productIds: ['courses', 'teaching'],
      operationId: 'list-courses',
      method: 'GET',
      urlTemplate: '/api/Course',
      templateParameters: [],
      queryParameters: [
        { name: 'courseID', required: true, schema: { type: 'integer' }, description: 'one course' },
      ],
      headerParameters: [{ name: 'X-Trace', required: false, schema: { type: 'string' } }],
      summary: 'List courses',
      description: 'Every course.',
    });
    expect(operations[1]).toEqual({
      apiId: 'courses',
      apiName: 'Course API',
      productIds: ['courses', 'teaching'],
      method: 'POST',
      urlTemplate: '/api/Course',
      templateParameters: [],
      queryParameters: [],
      headerParameters: [],
      requestBodySchema: { type: 'object', required: ['title'] },
    });
  });

  it('keeps operations of APIs in no product with no products (the endpoint does not serve them)', () => {
    expect(operations[2]).toMatchObject({ apiId: 'hidden', apiName: 'hidden', productIds: [] });
    expect(operations).toHaveLength(3);
  });

  it('is immutable and never changes', () => {
    expect(Object.isFrozen(operations)).toBe(true);
    expect(Object.isFrozen(operations[0])).toBe(true);
    const catalog = configToolCatalog(config);
    const unsubscribe = catalog.onChange(() => {
      throw new Error('no change expected');
    });
    expect(catalog.operations()).toBe(catalog.operations());
    unsubscribe();
  });
});
