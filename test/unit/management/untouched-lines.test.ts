import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { keepUntouchedLines } from '../../../src/management/untouched-lines.js';
import { type ManagementHarness, startManagement } from './harness.js';

const example = fileURLToPath(new URL('../../../examples/courses/', import.meta.url));
const exampleFile = (name: string) => readFileSync(path.join(example, name), 'utf8');

/** The example's gateway file without its own management section (the harness appends one with its administrator). */
function exampleGatewayYaml(): string {
  const text = exampleFile('gateway.yaml');
  const withoutManagement = text.replace(/\nmanagement:\n(?: .*\n)+/, '\n');
  expect(withoutManagement).not.toBe(text);
  return withoutManagement;
}

/** The lines of `after` that are not in `before`, and the other way round, in order. */
function changedLines(before: string, after: string): { removed: string[]; added: string[] } {
  const a = before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  return { removed: a.slice(head, a.length - tail), added: b.slice(head, b.length - tail) };
}

describe('a management call leaves the lines it is not about exactly as written', () => {
  let h: ManagementHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  // The README's walk-through used to turn `apis: [courses]` into `apis: [ courses ]` (and four more flow
  // collections) on a PUT of one API (issue #34, item 2).
  it('PUT of one API of the example changes that API’s line only: flow collections, quotes and comments stay', async () => {
    h = await startManagement({
      'gateway.yaml': exampleGatewayYaml(),
      'policies/courses-api.xml': exampleFile('policies/courses-api.xml'),
      'policies/guarded-api.xml': exampleFile('policies/guarded-api.xml'),
      'policies/list-courses.xml': exampleFile('policies/list-courses.xml'),
    });
    const before = await h.read('gateway.yaml');
    const policiesBefore = await Promise.all(
      ['courses-api.xml', 'guarded-api.xml', 'list-courses.xml'].map((name) => h!.read(`policies/${name}`)),
    );
    const guarded = (await h.request('GET', '/apis/guarded')).json;
    const answer = await h.request('PUT', '/apis/guarded', {
      body: { ...guarded, serviceUrl: 'http://127.0.0.1:8082' },
    });
    expect(answer.status).toBeLessThan(300);

    const after = await h.read('gateway.yaml');
    expect(changedLines(before, after)).toEqual({
      removed: ['    serviceUrl: http://127.0.0.1:8081'],
      added: ['    serviceUrl: http://127.0.0.1:8082'],
    });
    for (const flow of ['apis: [courses]', 'required: [title, credits]', 'allowedHosts: ["localhost:8080"']) {
      expect(after).toContain(flow);
    }
    const policiesAfter = await Promise.all(
      ['courses-api.xml', 'guarded-api.xml', 'list-courses.xml'].map((name) => h!.read(`policies/${name}`)),
    );
    expect(policiesAfter).toEqual(policiesBefore);
  });

  it('adds an entry to a flow list by rewriting that line only', async () => {
    h = await startManagement({
      'gateway.yaml': exampleGatewayYaml(),
      'policies/courses-api.xml': exampleFile('policies/courses-api.xml'),
      'policies/guarded-api.xml': exampleFile('policies/guarded-api.xml'),
      'policies/list-courses.xml': exampleFile('policies/list-courses.xml'),
    });
    const before = await h.read('gateway.yaml');
    expect((await h.request('PUT', '/products/courses/apis/guarded')).status).toBeLessThan(300);
    const { removed, added } = changedLines(before, await h.read('gateway.yaml'));
    expect(removed).toEqual(['  - { id: courses, name: Courses, apis: [courses] }']);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(/^ {2}- \{ id: courses, name: Courses, apis: \[ ?courses, guarded ?\] \}$/);
  });
});

describe('keepUntouchedLines', () => {
  it('takes each unchanged line from the original, the changed ones from the new rendering', () => {
    const original = 'a: [x]\nb: 1\nc: "q"\n';
    const before = 'a: [ x ]\nb: 1\nc: "q"\n';
    const after = 'a: [ x ]\nb: 2\nc: "q"\nd: 3\n';
    expect(keepUntouchedLines(original, before, after)).toBe('a: [x]\nb: 2\nc: "q"\nd: 3\n');
  });

  it('drops a removed line and keeps the original layout of its neighbours', () => {
    const original = 'list: [a,b]\ngone: 1\nkeep: {k: v}\n';
    const before = 'list: [ a, b ]\ngone: 1\nkeep: { k: v }\n';
    const after = 'list: [ a, b ]\nkeep: { k: v }\n';
    expect(keepUntouchedLines(original, before, after)).toBe('list: [a,b]\nkeep: {k: v}\n');
  });
});
