import { describe, expect, it } from 'vitest';
import {
  type DeclaredResponse,
  mockContent,
  schemaSample,
} from '../../../../src/policy/shared/mock-content.js';

/** What mock-response answers with (learn.microsoft.com/azure/api-management/mock-response-policy). */
describe('mockContent', () => {
  const responses: DeclaredResponse[] = [
    { status: '200', content: [{ contentType: 'application/json', example: { ok: true } }] },
    { status: '4XX', content: [{ contentType: 'application/json', schema: { type: 'string' } }] },
    { status: 'default', content: [{ contentType: 'text/plain', example: 'oops' }] },
  ];

  it('picks the exact status, then its class, then default', () => {
    expect(mockContent(responses, 200, undefined)).toEqual({
      contentType: 'application/json',
      body: '{"ok":true}',
    });
    expect(mockContent(responses, 409, undefined)).toEqual({
      contentType: 'application/json',
      body: '"string"',
    });
    expect(mockContent(responses, 500, undefined)).toEqual({ contentType: 'text/plain', body: 'oops' });
  });

  it('the named content type selects the media type (parameters and case aside); none declared: empty', () => {
    expect(mockContent(responses, 200, 'Application/JSON; charset=utf-8')).toEqual({
      contentType: 'Application/JSON; charset=utf-8',
      body: '{"ok":true}',
    });
    expect(mockContent(responses, 200, 'application/xml')).toEqual({
      contentType: 'application/xml',
      body: '',
    });
    expect(mockContent([], 201, undefined)).toEqual({ contentType: undefined, body: '' });
  });

  it('a JSON example that is a string is JSON; an XML schema without example gives no content', () => {
    expect(
      mockContent(
        [{ status: '200', content: [{ contentType: 'application/json', example: 'x' }] }],
        200,
        undefined,
      ).body,
    ).toBe('"x"');
    expect(
      mockContent(
        [{ status: '200', content: [{ contentType: 'application/xml', schema: { type: 'object' } }] }],
        200,
        undefined,
      ),
    ).toEqual({ contentType: 'application/xml', body: '' });
  });
});

describe('schemaSample', () => {
  it('uses what the schema offers: const, examples, default, the first enum value', () => {
    expect(schemaSample({ type: 'string', const: 'c', default: 'd' })).toBe('c');
    expect(schemaSample({ type: 'integer', examples: [5, 6], default: 1 })).toBe(5);
    expect(schemaSample({ type: 'integer', default: 1 })).toBe(1);
    expect(schemaSample({ type: 'string', enum: ['b', 'a'] })).toBe('b');
  });

  it('fills every property, one array item, placeholders by type and format', () => {
    expect(
      schemaSample({
        type: 'object',
        required: ['id'],
        properties: {
          id: { type: 'integer', format: 'int64' },
          price: { type: 'number', minimum: 1.5 },
          when: { type: 'string', format: 'date' },
          id2: { type: 'string', format: 'uuid' },
          active: { type: 'boolean' },
          note: { type: ['null', 'string'] },
          tags: { type: 'array', items: { type: 'string' } },
        },
      }),
    ).toEqual({
      id: 0,
      price: 1.5,
      when: '2024-01-01',
      id2: '00000000-0000-0000-0000-000000000000',
      active: true,
      note: 'string',
      tags: ['string'],
    });
  });

  it('merges allOf, takes the first of oneOf/anyOf, follows $defs and stops a recursive one as null', () => {
    expect(
      schemaSample({
        allOf: [{ type: 'object', properties: { a: { type: 'integer' } } }, { $ref: '#/$defs/B' }],
        $defs: {
          B: { type: 'object', properties: { b: { oneOf: [{ type: 'boolean' }, { type: 'string' }] } } },
          Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } },
        },
      }),
    ).toEqual({ a: 0, b: true });
    expect(
      schemaSample({
        $ref: '#/$defs/Node',
        $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } },
      }),
    ).toEqual({ next: null });
  });
});
