/**
 * What a case expects, checked against what came out. Each check is one named function in `checks`; a mismatch
 * is one `Mismatch` saying what was expected and what was found, for the failure's diff.
 */

import type { CaseOutcome } from './run-case.js';
import { plainValue } from './stubbed-services.js';
import type { Expectations, TextMatcher } from './test-file.js';

export interface Mismatch {
  /** The expectation's key path, e.g. `headers.content-type`. */
  readonly what: string;
  readonly expected: string;
  readonly actual: string;
}

/** Whether a text matches: exactly, by regex, or (JSON) as a superset of the expected JSON. */
export function textMatches(matcher: TextMatcher, actual: string): boolean {
  if (typeof matcher === 'string') return actual === matcher;
  if ('equals' in matcher) return actual === matcher.equals;
  if ('regex' in matcher) return new RegExp(matcher.regex).test(actual);
  let parsed: unknown;
  try {
    parsed = JSON.parse(actual);
  } catch {
    return false;
  }
  return jsonContains(parsed, matcher.json);
}

/** `expected` is a subset of `actual`: every key it names has a matching value; arrays match element by element. */
export function jsonContains(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== 'object')
    return Object.is(actual, expected) || actual === expected;
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, index) => jsonContains(actual[index], item))
    );
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  return Object.entries(expected).every(([key, value]) =>
    jsonContains((actual as Record<string, unknown>)[key], value),
  );
}

export function showMatcher(matcher: TextMatcher): string {
  if (typeof matcher === 'string') return JSON.stringify(matcher);
  if ('equals' in matcher) return JSON.stringify(matcher.equals);
  if ('regex' in matcher) return `/${matcher.regex}/`;
  return `JSON containing ${JSON.stringify(matcher.json)}`;
}

const show = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));

function headerValue(headers: readonly (readonly [string, string])[], name: string): string | undefined {
  const values = headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
  return values.length === 0 ? undefined : values.join(', ');
}

function checkHeaders(
  what: string,
  expected: Readonly<Record<string, TextMatcher | null>> | undefined,
  actual: readonly (readonly [string, string])[],
): Mismatch[] {
  return Object.entries(expected ?? {}).flatMap(([name, matcher]) => {
    const value = headerValue(actual, name);
    if (matcher === null)
      return value === undefined
        ? []
        : [{ what: `${what}.${name}`, expected: 'absent', actual: show(value) }];
    if (value !== undefined && textMatches(matcher, value)) return [];
    return [{ what: `${what}.${name}`, expected: showMatcher(matcher), actual: show(value) }];
  });
}

function checkText(what: string, matcher: TextMatcher | undefined, actual: string | undefined): Mismatch[] {
  if (matcher === undefined) return [];
  if (actual !== undefined && textMatches(matcher, actual)) return [];
  return [{ what, expected: showMatcher(matcher), actual: show(actual) }];
}

function checkValues(
  what: string,
  expected: Readonly<Record<string, unknown>> | undefined,
  actual: (key: string) => unknown,
): Mismatch[] {
  return Object.entries(expected ?? {}).flatMap(([key, value]) => {
    const found = plainValue(actual(key));
    return jsonContains(found, value)
      ? []
      : [{ what: `${what}.${key}`, expected: show(value), actual: show(found) }];
  });
}

type Check = (expected: Expectations, outcome: CaseOutcome) => Mismatch[];

/** Every expectation a case may state, in the order a failure lists them. */
const checks: readonly Check[] = [
  // Not an expectation but a hole in the case: a credential a policy asked for is never fetched for real.
  function stubs(_expected, outcome) {
    return outcome.missing.map(({ key, wanted }) => ({
      what: key,
      expected: wanted,
      actual: 'no stub (a case must stub every credential its policies ask for; `{ fail }` tests a failure)',
    }));
  },
  function status(expected, outcome) {
    if (expected.status === undefined || expected.status === outcome.response.status) return [];
    return [{ what: 'status', expected: String(expected.status), actual: String(outcome.response.status) }];
  },
  function headers(expected, outcome) {
    return checkHeaders('headers', expected.headers, outcome.response.headers);
  },
  function body(expected, outcome) {
    return checkText('body', expected.body, outcome.response.body.toString('utf8'));
  },
  function backend(expected, outcome) {
    const wanted = expected.backend;
    if (wanted === undefined) return [];
    const received = outcome.backend;
    if (wanted === false)
      return received === undefined
        ? []
        : [{ what: 'backend', expected: 'not called', actual: `${received.method} ${received.url}` }];
    if (received === undefined) return [{ what: 'backend', expected: 'a request', actual: 'not called' }];
    return [
      ...(wanted.method === undefined || wanted.method.toUpperCase() === received.method
        ? []
        : [{ what: 'backend.method', expected: wanted.method, actual: received.method }]),
      ...checkText('backend.url', wanted.url, received.url),
      ...checkHeaders('backend.headers', wanted.headers, received.headers),
      ...checkText('backend.body', wanted.body, received.body),
    ];
  },
  function calls(expected, outcome) {
    return (expected.calls ?? []).flatMap((wanted, index) => {
      const call = outcome.calls[index];
      const what = `calls[${index}]`;
      if (call === undefined) return [{ what, expected: 'a call', actual: 'none' }];
      return [
        ...(wanted.method === undefined || wanted.method.toUpperCase() === call.method.toUpperCase()
          ? []
          : [{ what: `${what}.method`, expected: wanted.method, actual: call.method }]),
        ...checkText(`${what}.url`, wanted.url, call.url),
        ...checkHeaders(`${what}.headers`, wanted.headers, call.headers),
        ...checkText(`${what}.body`, wanted.body, call.body),
      ];
    });
  },
  function variables(expected, outcome) {
    return checkValues('variables', expected.variables, (name) => outcome.variables.get(name) ?? null);
  },
  function lastError(expected, outcome) {
    const wanted = expected.lastError;
    if (wanted === undefined) return [];
    const actual = outcome.lastError;
    if (wanted === null)
      return actual === null || actual.reason === ''
        ? []
        : [{ what: 'lastError', expected: 'none', actual: `${actual.reason}: ${actual.message}` }];
    return Object.entries(wanted).flatMap(([field, matcher]) =>
      checkText(`lastError.${field}`, matcher, actual?.[field]),
    );
  },
  function counters(expected, outcome) {
    return Object.entries(expected.counters ?? {}).flatMap(([key, value]) => {
      const found = outcome.counters.get(key) ?? 0;
      return found === value
        ? []
        : [{ what: `counters.${key}`, expected: String(value), actual: String(found) }];
    });
  },
  function cache(expected, outcome) {
    return checkValues('cache', expected.cache, (key) => outcome.cache.get(key) ?? null);
  },
  function trace(expected, outcome) {
    // In order: each expected line after the one before it; a plain string is a substring.
    let from = 0;
    for (const [index, matcher] of (expected.trace ?? []).entries()) {
      const test = (line: string) =>
        typeof matcher === 'string' ? line.includes(matcher) : textMatches(matcher, line);
      const found = outcome.trace.findIndex((line, at) => at >= from && test(line));
      if (found < 0)
        return [
          {
            what: `trace[${index}]`,
            expected: showMatcher(matcher),
            actual: 'no such line after the previous one',
          },
        ];
      from = found + 1;
    }
    return [];
  },
];

export function checkExpectations(expected: Expectations, outcome: CaseOutcome): Mismatch[] {
  return checks.flatMap((check) => check(expected, outcome));
}
