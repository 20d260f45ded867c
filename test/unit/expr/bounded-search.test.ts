import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import {
  boundedSearch,
  compileBounded,
  dfaFirst,
  matchesFrom,
  SearchDeadlineExceeded,
} from '../../../src/expr/runtime/bounded-search.js';

/** A deadline already passed: any metered search stops at its first look at the clock. */
const PASSED = () => performance.now() - 1;

describe('re2js searches stopped at a deadline while they run (issue 29)', () => {
  const heavy = compileBounded('(.*a){50}', 0);
  const input = 'a'.repeat(60_000);

  it('a search whose worst case is large is stopped inside re2js once the deadline has passed', () => {
    const m = heavy.matcher(input);
    expect(() => boundedSearch(heavy, input.length, PASSED(), () => m.find(0))).toThrow(
      SearchDeadlineExceeded,
    );
  });

  it('each of re2js engines is metered: the NFA (find), the DFA (matchesFrom), the one-pass and bit-state ones', () => {
    const dfaThrash = compileBounded('(a|b)*a(a|b){25}(c|d)', 0);
    const ab = 'ab'.repeat(50_000);
    expect(() => boundedSearch(dfaThrash, ab.length, PASSED(), () => matchesFrom(dfaThrash, ab, 0))).toThrow(
      SearchDeadlineExceeded,
    );
    // One-pass (anchored, unambiguous) and the bit-state backtracker (small inputs) read through the same input.
    // Each input holds the literal the pattern needs: without it re2js's prefilter answers before any engine runs.
    const onePass = compileBounded('^(?:a|b)*c$', 0);
    const abc = `${ab}c`;
    expect(() => boundedSearch(onePass, abc.length, PASSED(), () => onePass.matcher(abc).find(0))).toThrow(
      SearchDeadlineExceeded,
    );
    const small = compileBounded('(x*y*)*z', 0);
    const xy = `${'xy'.repeat(2_000)}z`;
    expect(() => boundedSearch(small, xy.length, PASSED(), () => small.matcher(xy).find(0))).toThrow(
      SearchDeadlineExceeded,
    );
  });

  it('the pattern answers correctly after a stopped search (nothing of the stopped one is kept)', () => {
    const m = heavy.matcher(input);
    expect(() => boundedSearch(heavy, input.length, PASSED(), () => m.find(0))).toThrow(
      SearchDeadlineExceeded,
    );
    const short = `${'xa'.repeat(50)}!`;
    const again = heavy.matcher(short);
    expect(boundedSearch(heavy, short.length, performance.now() + 60_000, () => again.find(0))).toBe(true);
    expect(again.end()).toBe(short.length - 1);
    expect(matchesFrom(heavy, 'b'.repeat(100), 0)).toBe(false);
  });

  it('a search whose worst case is tiny runs unmetered: the common case pays nothing', () => {
    const bearer = compileBounded('^Bearer (.+)$', 0);
    const m = bearer.matcher('Bearer abc');
    // Past the deadline, yet never stopped: it cannot run long enough to matter.
    expect(boundedSearch(bearer, 10, PASSED(), () => m.find(0))).toBe(true);
    expect(m.group(1)).toBe('abc');
  });

  it('the DFA is asked first only where it is the faster: no literal prefix, an input long for the pattern', () => {
    expect(dfaFirst(compileBounded('\\d{16}', 0), 1_000_000)).toBe(true);
    // The NFA jumps from one `id=` to the next with indexOf; the DFA would read every character.
    expect(dfaFirst(compileBounded('id=(\\d+);', 0), 1_000_000)).toBe(false);
    // 2,001 instructions over 1,000 characters: building the DFA's states costs more than the NFA's whole search.
    const counted = compileBounded('^[\\p{L}\\p{N}]{1,1000}$', 0);
    expect(dfaFirst(counted, 1_000)).toBe(false);
    const letters = 'x'.repeat(1_000);
    expect(matchesFrom(counted, letters, 0, () => counted.matcher(letters).find(0))).toBe(true);
  });

  it('a pattern compiled elsewhere cannot be searched as if bounded', () => {
    const plain = RE2JS.compile('a');
    expect(() => boundedSearch(plain, 1, PASSED(), () => plain.matcher('a').find(0))).toThrow(
      'the pattern was not compiled by compileBounded',
    );
  });
});
