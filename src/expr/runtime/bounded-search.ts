/**
 * Regex searches whose time is bounded while they run, not only before they start.
 *
 * RE2 never backtracks, but one search still costs O(input × program): the Pike VM keeps up to one thread per
 * instruction at every input position and copies capture slots between them. `(.*,){10}` on 1 MB of commas took 2 s,
 * `(.*a){50}` on 1 Mi characters 24–30 s — on the engine's only thread, while every other API answered 504 (Envoy's
 * ext_proc message timeout is 500 ms). A budget checked between searches cannot stop one search; this one is checked
 * inside it.
 *
 * How, of the ways to bound a search:
 * - A limit on input size × program size refused up front would have to be set for the worst pattern of each size,
 *   and would refuse the common case too: `"id"\s*:\s*"([^"]*)"` over a 1 MB body is 17 instructions × 1 Mi, yet it
 *   answers in about 130 ms because only a few threads are ever alive. What a search really costs is only known as
 *   it runs.
 * - A worker thread stopped at the deadline would free the event loop, but expressions are synchronous closures: the
 *   engine would block waiting for the worker anyway, and would copy every input (up to 1 Mi characters) to it.
 * - So the clock is read inside the search. re2js reads its input one position at a time through
 *   `MachineInput.step`, in every engine it has (Pike VM, bit-state backtracker, one-pass, lazy DFA); the work between
 *   two reads is at most one pass over the program. Each compiled pattern's `executeEngine` is wrapped so that, while a
 *   bounded search runs, the input it is given is replaced by a copy that counts its reads and looks at the clock
 *   every `interval` reads, `interval` chosen from the program's size so that a check comes every few hundred
 *   microseconds of work at most. A search past its deadline throws out of re2js; nothing of it is kept (the machine it ran on is dropped).
 *
 * The common case pays nothing: a search whose worst case (positions × instructions × capture groups) is small
 * enough to finish in well under a millisecond runs unwrapped.
 */
import { RE2JS } from 're2js';
import { CsException, type Rt, step } from './core.js';

/** The input re2js's engines read: one code point (shifted, with its width in the low 3 bits) per call. */
interface MachineInput {
  step(pos: number): number;
}

type ExecuteEngine = (
  input: MachineInput,
  pos: number,
  anchor: number,
  ncap: number,
  lbState?: unknown,
) => unknown;

/** A search that ran past its deadline; caught by the caller and turned into its own exception. */
export class SearchDeadlineExceeded extends Error {}

/**
 * Work units (positions × instructions × (1 + capture groups)) between two looks at the clock. Measured on re2js
 * 2.10: 1 unit costs 0.4–4 ns, so 2^16 units is at most ~0.3 ms of searching.
 */
const UNITS_PER_CHECK = 1 << 16;
/** Below this worst case a search is not metered at all (it cannot run longer than a clock check's interval). */
const UNMETERED_UNITS = UNITS_PER_CHECK;

interface Meter {
  readonly deadline: number;
  readonly interval: number;
}

/** Set only for the duration of one bounded search (searches are synchronous and never nest). */
let active: Meter | null = null;

/** What is known of each compiled pattern: its worst case per input position, and whether to ask the DFA first. */
interface Profile {
  readonly unitsPerPosition: number;
  /** Input positions from which the DFA is asked first (Infinity: never). */
  readonly dfaFrom: number;
}

/**
 * The DFA builds each state it reaches once, at the cost of one pass over the program; over an input short for the
 * program that is slower than the NFA (`^[\p{L}\p{N}]{1,1000}$`, 2,001 instructions, over 1,000 characters: 60 ms
 * against 4). So it is asked first only for inputs of this many positions per instruction.
 */
const DFA_POSITIONS_PER_INSTRUCTION = 64;
const profiles = new WeakMap<RE2JS, Profile>();

/**
 * Compiles `source` with re2js and wraps its engine entry so that bounded searches can be stopped. Every pattern
 * searched with `boundedSearch` must come from here.
 */
export function compileBounded(source: string, flags: number): RE2JS {
  const re = RE2JS.compile(source, flags);
  const re2 = re.re2();
  const execute = re2.executeEngine as ExecuteEngine | undefined;
  if (typeof execute !== 'function') {
    // A re2js release that no longer has this entry must fail loudly here, not silently run searches unbounded.
    throw new TypeError(
      're2js: RE2.executeEngine is missing; regex searches cannot be bounded with this version',
    );
  }
  re2.executeEngine = function meteredExecute(this: unknown, input, pos, anchor, ncap, lbState) {
    const metered = active === null ? input : meter(input as MachineInput, active);
    return execute.call(this, metered as MachineInput, pos, anchor, ncap, lbState);
  } as typeof re2.executeEngine;
  profiles.set(re, {
    unitsPerPosition: re2.numberOfInstructions() * (1 + re.groupCount()),
    // A pattern with a literal prefix is found faster by the NFA, which jumps to each occurrence with indexOf; the
    // DFA reads every character (`id=(\d+)` over 1 MB: 1 ms against 50 ms).
    dfaFrom:
      typeof re2.prefix !== 'string' || re2.prefix.length === 0
        ? re2.numberOfInstructions() * DFA_POSITIONS_PER_INSTRUCTION
        : Number.POSITIVE_INFINITY,
  });
  return re;
}

/** A metered copy of one re2js input: its fields, plus the countdown to the next look at the clock. */
interface MeteredInput extends MachineInput {
  meterCountdown: number;
  meterInterval: number;
  meterDeadline: number;
}

/** Per re2js input class, a prototype whose `step` counts; one per class keeps the engines' call sites fast. */
const meteredPrototypes = new WeakMap<object, object>();

function meteredPrototype(base: MachineInput): object {
  let proto = meteredPrototypes.get(base);
  if (proto === undefined) {
    const step = base.step;
    proto = Object.create(base, {
      step: {
        value(this: MeteredInput, pos: number): number {
          if (--this.meterCountdown === 0) {
            this.meterCountdown = this.meterInterval;
            if (performance.now() > this.meterDeadline) throw new SearchDeadlineExceeded();
          }
          return step.call(this, pos);
        },
      },
    }) as object;
    meteredPrototypes.set(base, proto);
  }
  return proto;
}

/**
 * The input re2js created for one search, as a copy that reads the clock every `interval` positions. A copy with a
 * prototype of its own, not a closure set on the input: re2js's loops stay as fast as unmetered (a closure cost 20%).
 */
function meter(input: MachineInput, m: Meter): MachineInput {
  const metered = Object.assign(
    Object.create(meteredPrototype(Object.getPrototypeOf(input) as MachineInput)) as MeteredInput,
    input,
  );
  metered.meterCountdown = m.interval;
  metered.meterInterval = m.interval;
  metered.meterDeadline = m.deadline;
  return metered;
}

/**
 * Runs `search` (one or more re2js calls on `re` over `positions` characters), throwing SearchDeadlineExceeded once
 * `deadline` (a performance.now() time) has passed.
 */
export function boundedSearch<T>(re: RE2JS, positions: number, deadline: number, search: () => T): T {
  const { unitsPerPosition } = profileOf(re);
  if (positions * unitsPerPosition <= UNMETERED_UNITS) return search();
  const previous = active;
  active = { deadline, interval: Math.max(1, Math.floor(UNITS_PER_CHECK / unitsPerPosition)) };
  try {
    return search();
  } finally {
    active = previous;
  }
}

function profileOf(re: RE2JS): Profile {
  const profile = profiles.get(re);
  if (profile === undefined) throw new TypeError('the pattern was not compiled by compileBounded');
  return profile;
}

/**
 * Whether `re` matches anywhere at or after `start` of `s`. Asked without capture groups, re2js runs its lazy DFA
 * (falling back to the NFA when the DFA's state cache overflows), 7–30 times faster than the NFA that a Matcher's
 * `find` always runs: `\d{16}` over 1 MB, 27 ms instead of 800 ms. When the NFA is the faster (see `dfaFirst`),
 * `find` answers instead if given (it searches with the Matcher).
 */
export function matchesFrom(re: RE2JS, s: string, start: number, find?: () => boolean): boolean {
  if (find && !dfaFirst(re, s.length - start)) return find();
  return re.re2().matchWithGroup(s, start, s.length, UNANCHORED, 0)[0] as boolean;
}

/**
 * Whether to ask `matchesFrom` before a Matcher's `find` over `positions`: when the DFA is the faster way to learn
 * there is no match (the pattern has no literal prefix, and the input is long for the pattern).
 */
export const dfaFirst = (re: RE2JS, positions: number): boolean => positions >= profileOf(re).dfaFrom;

/** re2js's RE2Flags.UNANCHORED (not exported). */
const UNANCHORED = 0;

const quoted = (pattern: string): string =>
  JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 77)}...` : pattern);

/**
 * One search (`search` runs re2js on `re` from `start` of `input`) within the evaluation's regex budget: a step, the
 * budget checked before it starts and enforced while it runs, its time counted (.NET's match timeout fires inside
 * a match too). `pattern` is how the author wrote it, for the message.
 */
export function searchWithinBudget<T>(
  rt: Rt,
  re: RE2JS,
  pattern: string,
  input: string,
  start: number,
  search: () => T,
): T {
  step(rt);
  const left = rt.limits.maxRegexMilliseconds - rt.regexMilliseconds;
  if (left <= 0) throw regexTimeout(rt, pattern, input, 'was not started');
  const began = performance.now();
  try {
    return boundedSearch(re, input.length - start, began + left, search);
  } catch (e) {
    if (e instanceof SearchDeadlineExceeded) throw regexTimeout(rt, pattern, input, 'was stopped');
    throw e;
  } finally {
    rt.regexMilliseconds += performance.now() - began;
  }
}

function regexTimeout(rt: Rt, pattern: string, input: string, outcome: string): CsException {
  return new CsException(
    'RegexMatchTimeoutException',
    `regular expression searches took more than the limit of ${rt.limits.maxRegexMilliseconds} ms ` +
      `(maxRegexMilliseconds) in this evaluation: ` +
      `the search for ${quoted(pattern)} in ${input.length} characters ${outcome}`,
  );
}
