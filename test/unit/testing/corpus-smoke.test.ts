/**
 * Each document of the public corpus (Azure/api-management-policy-snippets) as the policy of a generated gateway,
 * one request through it with every backend and outbound call stubbed: the policy test runner loads it and runs
 * it without crashing. The gateways are generated here, at test time; documents the loader rejects (see
 * test/unit/policy/corpus.test.ts for why) are counted, not run.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { GatewayLoadError } from '../../../src/config/gateway.js';
import { runSuite } from '../../../src/testing/suite.js';

const ROOT = '/work/shared/corpus/apim-snippets';
const namedValues = readFileSync(
  new URL('../policy/fixtures/corpus-named-values.yaml', import.meta.url),
  'utf8',
);

function corpusFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return corpusFiles(file);
    return file.endsWith('.xml') ? [file] : [];
  });
}

const scratch = mkdtempSync(path.join(tmpdir(), 'portcullis-corpus-smoke-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A gateway whose only product (open, so every call belongs to it) carries the document: product scope allows every element. */
function generate(document: string, index: number): string {
  const folder = path.join(scratch, String(index));
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, 'policy.xml'), readFileSync(document, 'utf8'));
  writeFileSync(
    path.join(folder, 'gateway.yaml'),
    `namedValues:\n${namedValues
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'))
      .map((line) => `  ${line}`)
      .join('\n')}\n${stringify({
      apis: [
        {
          id: 'corpus',
          urlSuffix: 'corpus',
          serviceUrl: 'http://backend.test:8080',
          subscriptionRequired: false,
          operations: [{ id: 'any', method: 'POST', urlTemplate: '/{*rest}' }],
        },
      ],
      products: [{ id: 'snippets', apis: ['corpus'], subscriptionRequired: false, policy: 'policy.xml' }],
    })}`,
  );
  const test = path.join(folder, 'smoke.policy-test.yaml');
  writeFileSync(
    test,
    stringify({
      cases: [
        {
          name: path.basename(document),
          api: 'corpus',
          operation: 'any',
          request: {
            parameters: { rest: 'items/1' },
            query: { id: '1' },
            headers: { Authorization: 'Bearer e30.e30.', 'Content-Type': 'application/json' },
            body: { id: 1, name: 'item' },
          },
          stubs: {
            backend: { status: 200, body: { id: 1 } },
            http: [{ url: '*', status: 200, body: { access_token: 'token', expires_in: 3600, value: 'v' } }],
            time: '2026-01-01T00:00:00Z',
          },
        },
      ],
    }),
  );
  return test;
}

describe('the public corpus through portcullis test', () => {
  const documents = corpusFiles(ROOT);
  let ran = 0;
  let rejected = 0;

  for (const [index, document] of documents.entries()) {
    it(`runs ${path.relative(ROOT, document)}`, async () => {
      const test = generate(document, index);
      let result: Awaited<ReturnType<typeof runSuite>>;
      try {
        result = await runSuite([test]);
      } catch (error) {
        // Refused at load (an element not implemented, a damaged document): the loader's tests own that.
        expect(error).toBeInstanceOf(GatewayLoadError);
        rejected++;
        return;
      }
      const [only] = result.cases;
      expect(only!.error, only!.error).toBeUndefined();
      expect(only!.outcome!.response.status).toBeGreaterThanOrEqual(100);
      expect(only!.outcome!.steps.length).toBeGreaterThan(0);
      ran++;
    });
  }

  it('ran most of the corpus', () => {
    expect(ran + rejected).toBe(documents.length);
    expect(ran).toBeGreaterThan(documents.length / 2);
  });
});
