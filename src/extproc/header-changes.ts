import { internalHeaderPrefix } from '../envoy/contract.js';
import type { HeaderChange, HeaderFields } from './headers.js';

/**
 * Translating between the headers Envoy sends, the header lists policies see and change, and the changes Envoy
 * applies.
 */

/** Headers that describe the message framing, which Envoy owns. */
export const framingHeaders = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** Headers the engine does not copy onto a request it makes itself (fetch sets them from the URL and body). */
export const unforwardable = new Set([...framingHeaders, 'host', 'expect', 'upgrade']);

export function isEnvoyHeader(name: string): boolean {
  return name.toLowerCase().startsWith('x-envoy-');
}

export function headerValue(
  headers: Iterable<readonly [string, string | readonly string[]]>,
  name: string,
): string | undefined {
  for (const [key, value] of headers) {
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value[0];
  }
  return undefined;
}

/** Headers a policy may see: no pseudo-headers, no Portcullis-internal ones. */
export function policyVisibleHeaders(fields: HeaderFields): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, values] of fields) {
    if (name.startsWith(':') || name.startsWith(internalHeaderPrefix)) continue;
    for (const value of values) out.push([name, value]);
  }
  return out;
}

/**
 * The changes that turn one header list into another: names whose values differ are replaced (first value
 * overwrites, the rest append), names that disappeared are removed. Names compare case-insensitively.
 */
export function diffHeaders(
  before: readonly (readonly [string, string])[],
  after: readonly (readonly [string, string])[],
): { set: HeaderChange[]; remove: string[] } {
  const old = groupByName(before);
  const now = groupByName(after);
  const set: HeaderChange[] = [];
  for (const [name, values] of now) {
    if (framingHeaders.has(name)) continue;
    const previous = old.get(name);
    if (
      previous &&
      previous.length === values.length &&
      previous.every((value, index) => value === values[index])
    )
      continue;
    for (const [index, value] of values.entries())
      set.push({ name, value, ...(index > 0 ? { append: true } : {}) });
  }
  const remove = [...old.keys()].filter((name) => !now.has(name) && !framingHeaders.has(name));
  return { set, remove };
}

function groupByName(list: readonly (readonly [string, string])[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const [name, value] of list) {
    const key = name.toLowerCase();
    const values = map.get(key);
    if (values) values.push(value);
    else map.set(key, [value]);
  }
  return map;
}

/** `source.address` is "ip:port" or "[v6]:port"; policies see the address alone. */
export function clientAddress(value: unknown): string {
  if (typeof value !== 'string') return '';
  const bracketed = /^\[([^\]]+)\]:\d+$/.exec(value);
  if (bracketed) return bracketed[1]!;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(value);
  return v4 ? v4[1]! : value;
}
