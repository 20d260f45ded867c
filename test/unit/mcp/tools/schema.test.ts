import { describe, expect, it } from 'vitest';
import { buildToolCallRequest } from '../../../../src/mcp/tools/request.js';
import { annotateMirroredArguments, buildToolInput } from '../../../../src/mcp/tools/schema.js';
import type { ToolOperation } from '../../../../src/mcp/types.js';

const base: ToolOperation = {
  apiId: 'a',
  apiName: 'A',
  productIds: ['p'],
  method: 'PUT',
  urlTemplate: '/items/{id}',
  templateParameters: [{ name: 'id', required: true, schema: { type: 'integer' }, description: 'Item id' }],
  queryParameters: [
    { name: 'id', required: false },
    { name: 'tag', required: false, schema: { type: 'array', items: { type: 'string' } } },
  ],
  headerParameters: [
    { name: 'Authorization', required: true },
    { name: 'X-Trace', required: true },
  ],
  requestBodySchema: { type: 'object' },
};

describe('tool input schema', () => {
  it('flattens parameters, prefixes a clashing name, hides reserved headers, adds the body', () => {
    const { inputSchema, bindings } = buildToolInput(base);
    expect(inputSchema).toEqual({
      type: 'object',
      properties: {
        id: { type: 'integer', description: 'Item id (path parameter {id})' },
        query_id: { type: 'string', description: 'query parameter "id"' },
        tag: { type: 'array', items: { type: 'string' }, description: 'query parameter "tag"' },
        'X-Trace': { type: 'string', description: 'request header "X-Trace"' },
        body: { description: 'JSON request body', type: 'object' },
      },
      required: ['id', 'X-Trace'],
      additionalProperties: false,
    });
    expect(bindings.map((b) => `${b.argument}→${b.location}:${b.name}`)).toEqual([
      'id→template:id',
      'query_id→query:id',
      'tag→query:tag',
      'X-Trace→header:X-Trace',
      'body→body:body',
    ]);
  });

  it('makes undeclared template variables required strings, and a no-argument tool a closed object', () => {
    const bare = {
      ...base,
      urlTemplate: '/x/{a}',
      templateParameters: [],
      queryParameters: [],
      headerParameters: [],
    };
    expect(buildToolInput({ ...bare, requestBodySchema: undefined }).inputSchema).toEqual({
      type: 'object',
      properties: { a: { type: 'string', description: 'path parameter {a}' } },
      required: ['a'],
      additionalProperties: false,
    });
    expect(buildToolInput({ ...bare, urlTemplate: '/x', requestBodySchema: undefined }).inputSchema).toEqual({
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
  });

  it('builds the request: encoded path, repeated query values, headers, body', () => {
    const { bindings } = buildToolInput(base);
    expect(
      buildToolCallRequest(base.urlTemplate, bindings, {
        id: 3,
        query_id: 'q',
        tag: ['a', 'b c'],
        'X-Trace': 't',
        body: { k: 1 },
      }),
    ).toEqual({
      path: '/items/3?id=q&tag=a&tag=b+c',
      templateParameters: { id: '3' },
      query: { id: 'q', tag: ['a', 'b c'] },
      headers: { 'X-Trace': 't' },
      body: { k: 1 },
    });
  });

  it('keeps the slashes of a wildcard template variable', () => {
    const op = {
      ...base,
      urlTemplate: '/files/{*path}',
      templateParameters: [],
      queryParameters: [],
      headerParameters: [],
    };
    const { bindings } = buildToolInput({ ...op, requestBodySchema: undefined });
    expect(buildToolCallRequest(op.urlTemplate, bindings, { path: 'a b/c?d' }).path).toBe(
      '/files/a%20b/c%3Fd',
    );
  });
});

describe('arguments mirrored into Mcp-Param-* headers (SEP-2243)', () => {
  it('mirrors string, integer and boolean header parameters under their own header name; nothing else', () => {
    const op: ToolOperation = {
      ...base,
      queryParameters: [{ name: 'region', required: false }],
      headerParameters: [
        { name: 'X-Trace', required: false },
        { name: 'X-Priority', required: true, schema: { type: 'integer' } },
        { name: 'X-Dry-Run', required: false, schema: { type: 'boolean' } },
        { name: 'X-Weight', required: false, schema: { type: 'number' } },
        { name: 'X-Tags', required: false, schema: { type: 'array', items: { type: 'string' } } },
        { name: 'X-Either', required: false, schema: { type: ['string', 'null'] } },
        { name: 'x-trace', required: false },
        { name: 'Bad Name', required: false },
        { name: 'Authorization', required: false },
      ],
    };
    const { mirrored, inputSchema } = buildToolInput(op);
    expect(mirrored).toEqual([
      { argument: 'X-Trace', header: 'X-Trace', type: 'string' },
      { argument: 'X-Priority', header: 'X-Priority', type: 'integer' },
      { argument: 'X-Dry-Run', header: 'X-Dry-Run', type: 'boolean' },
    ]);
    const annotated = annotateMirroredArguments(inputSchema, mirrored) as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(
      Object.entries(annotated.properties).map(([argument, schema]) => [argument, schema['x-mcp-header']]),
    ).toEqual([
      ['id', undefined],
      ['region', undefined],
      ['X-Trace', 'X-Trace'],
      ['X-Priority', 'X-Priority'],
      ['X-Dry-Run', 'X-Dry-Run'],
      ['X-Weight', undefined],
      ['X-Tags', undefined],
      ['X-Either', undefined],
      ['x-trace', undefined],
      ['Bad Name', undefined],
      ['body', undefined],
    ]);
    // The schema every other revision sees is left as it was.
    expect(JSON.stringify(inputSchema)).not.toContain('x-mcp-header');
  });
});
