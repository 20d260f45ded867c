import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const CONTRACT = [
  'CountMode',
  'SlidingWindowRequest',
  'SlidingWindowResult',
  'QuotaRequest',
  'QuotaResult',
  'ConcurrencyLease',
  'LimitStore',
  'LimitCounters',
];

describe('the limit-counter contract', () => {
  it('is declared once, in src/limit-counters.ts, for policy/, state/ and the engine alike', () => {
    const declared = (readdirSync(SRC, { recursive: true }) as string[])
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) => {
        const text = readFileSync(path.join(SRC, file), 'utf8');
        return CONTRACT.filter((name) =>
          new RegExp(`^export (interface|type) ${name}\\b`, 'm').test(text),
        ).map((name) => `${file.split(path.sep).join('/')}: ${name}`);
      })
      .sort();
    expect(declared).toEqual(CONTRACT.map((name) => `limit-counters.ts: ${name}`).sort());
  });
});
