import { describe, expect, it } from 'vitest';
import { jsonContains, textMatches } from '../../../src/testing/expectations.js';

describe('expectation matching', () => {
  it('matches text exactly, by regex, or as JSON containing the expected subset', () => {
    expect(textMatches('ok', 'ok')).toBe(true);
    expect(textMatches('ok', 'ok ')).toBe(false);
    expect(textMatches({ equals: 'a' }, 'a')).toBe(true);
    expect(textMatches({ regex: '^Bearer [a-z]+$' }, 'Bearer abc')).toBe(true);
    expect(textMatches({ regex: '^Bearer [a-z]+$' }, 'Basic abc')).toBe(false);
    expect(textMatches({ json: { a: { b: 1 } } }, '{"a":{"b":1,"c":2},"d":3}')).toBe(true);
    expect(textMatches({ json: { a: { b: 2 } } }, '{"a":{"b":1}}')).toBe(false);
    expect(textMatches({ json: {} }, 'not json')).toBe(false);
  });

  it('compares arrays element by element and of the same length', () => {
    expect(jsonContains([{ id: 1, t: 'x' }], [{ id: 1 }])).toBe(true);
    expect(jsonContains([{ id: 1 }, { id: 2 }], [{ id: 1 }])).toBe(false);
    expect(jsonContains({ a: [1, 2] }, { a: [1, 2] })).toBe(true);
    expect(jsonContains({ a: null }, { a: null })).toBe(true);
    expect(jsonContains({}, { a: null })).toBe(false);
    expect(jsonContains('1', 1)).toBe(false);
  });
});
