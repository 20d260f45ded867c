import { describe, expect, it } from 'vitest';
import { buildToolCallRequest } from '../../../../src/mcp/tools/request.js';
import { buildToolInput } from '../../../../src/mcp/tools/schema.js';
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
