import { describe, expect, it } from 'vitest';
import { assignToolNames, baseToolName } from '../../../../src/mcp/tools/naming.js';
import type { ToolOperation } from '../../../../src/mcp/types.js';

function op(over: Partial<ToolOperation>): ToolOperation {
  return {
    apiId: 'a',
    apiName: 'A',
    productIds: ['p'],
    method: 'GET',
    urlTemplate: '/x',
    templateParameters: [],
    queryParameters: [],
    headerParameters: [],
    ...over,
  };
}

describe('tool names', () => {
  it('uses the operationId, made name-safe', () => {
    expect(baseToolName(op({ operationId: 'getCourse' }))).toBe('getCourse');
    expect(baseToolName(op({ operationId: 'Course.Get by id!' }))).toBe('Course_Get_by_id');
  });

  it('falls back to method + template', () => {
    expect(baseToolName(op({ method: 'GET', urlTemplate: '/api/Course/{id}' }))).toBe('get_api_Course_id');
    expect(baseToolName(op({ method: 'POST', urlTemplate: '/' }))).toBe('post_root');
    expect(baseToolName(op({ method: 'GET', urlTemplate: '/files/{*path}' }))).toBe('get_files_path');
  });

  it('keeps names within 64 characters of [A-Za-z0-9_-]', () => {
    const name = baseToolName(op({ operationId: 'x'.repeat(200) }));
    expect(name).toBe('x'.repeat(64));
  });

  it('prefixes colliding names with the API id, whatever the catalog order', () => {
    const a = op({ apiId: 'billing', operationId: 'list' });
    const b = op({ apiId: 'courses', operationId: 'list' });
    const c = op({ apiId: 'courses', operationId: 'get' });
    for (const order of [
      [a, b, c],
      [c, b, a],
    ]) {
      const names = assignToolNames(order);
      expect([names.get(a), names.get(b), names.get(c)]).toEqual(['billing_list', 'courses_list', 'get']);
    }
  });

  it('numbers what still collides', () => {
    const a = op({ operationId: 'same', urlTemplate: '/a' });
    const b = op({ operationId: 'same', urlTemplate: '/b' });
    const names = assignToolNames([b, a]);
    expect([names.get(a), names.get(b)]).toEqual(['a_same', 'a_same_2']);
  });
});
