import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { configToolCatalog } from '../../../src/service/catalog.js';

const TEXT = `apis:
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
`;
const config = parseConfig(TEXT, 'gw.yaml');

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

  it('turns no operation of a WebSocket API into a tool: its one operation is the opening handshake', () => {
    const withSocket = parseConfig(
      `${TEXT}  - { id: chat, apis: [chat] }
`.replace(
        'products:',
        `  - id: chat
    type: websocket
    urlSuffix: chat
    serviceUrl: http://127.0.0.1:1
    operations: [{ id: onHandshake, method: GET, urlTemplate: / }]
products:`,
      ),
      'gw.yaml',
    );
    expect(withSocket.apis.map((api) => api.id)).toContain('chat');
    expect(
      configToolCatalog(withSocket)
        .operations()
        .map((operation) => operation.apiId),
    ).toEqual(['courses', 'courses', 'hidden']);
  });

  it('is immutable until replaced', () => {
    expect(Object.isFrozen(operations)).toBe(true);
    expect(Object.isFrozen(operations[0])).toBe(true);
    const catalog = configToolCatalog(config);
    expect(catalog.operations()).toBe(catalog.operations());
  });
});

describe('configToolCatalog: replace', () => {
  const labs = parseConfig(
    `apis:
  - id: labs
    urlSuffix: labs
    serviceUrl: http://127.0.0.1:1
    operations: [{ id: list-labs, method: GET, urlTemplate: /labs }]
products: [{ id: labs, apis: [labs] }]
`,
    'gw.yaml',
  );

  it('swaps in the operations of the new configuration and tells the listeners once', () => {
    const catalog = configToolCatalog(config);
    const before = catalog.operations();
    let changes = 0;
    catalog.onChange(() => changes++);
    const withLabs = {
      apis: [...config.apis, ...labs.apis],
      products: [...config.products, ...labs.products],
    };
    expect(catalog.replace(withLabs)).toBe(true);
    expect(changes).toBe(1);
    expect(before).toHaveLength(3);
    expect(catalog.operations()).toHaveLength(4);
    expect(catalog.operations()[3]).toMatchObject({
      apiId: 'labs',
      operationId: 'list-labs',
      productIds: ['labs'],
    });
    expect(Object.isFrozen(catalog.operations())).toBe(true);
  });

  it('calls no listener when the tools are the same (a reload that changed policies only)', () => {
    const catalog = configToolCatalog(config);
    const before = catalog.operations();
    catalog.onChange(() => {
      throw new Error('no change expected');
    });
    // Equal, not identical: a configuration loaded again from the same text.
    expect(catalog.replace(parseConfig(TEXT, 'gw.yaml'))).toBe(false);
    expect(catalog.operations()).toBe(before);
  });

  it('counts a change of products alone: the same operation is granted by other scopes', () => {
    const catalog = configToolCatalog(config);
    let changes = 0;
    const unsubscribe = catalog.onChange(() => changes++);
    expect(catalog.replace({ ...config, products: [config.products[0]!] })).toBe(true);
    expect(catalog.operations()[0]!.productIds).toEqual(['courses']);
    unsubscribe();
    expect(catalog.replace(config)).toBe(true);
    expect(changes).toBe(1);
  });
});
