import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../../src/cli/command.js';
import { command } from '../../../src/cli/commands/policy-reference.js';
import { ELEMENT_LIST } from '../../../src/policy/elements/index.js';
import type { PolicyReference } from '../../../src/policy/reference.js';

const cli = fileURLToPath(new URL('../../../bin/portcullis.js', import.meta.url));
const doc = fileURLToPath(new URL('../../../docs/policy-reference.md', import.meta.url));

describe('portcullis policy-reference', () => {
  let out: string[];
  beforeEach(() => {
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());

  it('is what docs/policy-reference.md holds (regenerate: portcullis policy-reference > docs/policy-reference.md)', async () => {
    expect(await command.run([])).toBe(0);
    expect(out.join('')).toBe(readFileSync(doc, 'utf8'));
  });

  it('gives the same declarations as JSON, children and their attributes included', async () => {
    expect(await command.run(['--format', 'json'])).toBe(0);
    const reference = JSON.parse(out.join('')) as PolicyReference;
    expect(reference.elements.map((e) => e.name)).toEqual(ELEMENT_LIST.map((e) => e.name).sort());
    const jwt = reference.elements.find((e) => e.name === 'validate-jwt');
    expect(jwt?.attributes).toContainEqual({
      name: 'failed-validation-httpcode',
      kind: 'int',
      min: 100,
      max: 599,
      required: false,
      default: 401,
      expression: true,
    });
    const claims = jwt?.content.kind === 'elements' ? jwt.content.children : [];
    expect(claims.find((c) => c.name === 'required-claims')?.content).toMatchObject({
      kind: 'elements',
      children: [
        { name: 'claim', attributes: expect.arrayContaining([expect.objectContaining({ name: 'match' })]) },
      ],
    });
    expect(reference.declared).toContainEqual({
      name: 'send-service-bus-message',
      why: 'needs Azure Service Bus',
    });
  });

  it("says under an element where it cannot behave as API Management's, and why", async () => {
    expect(await command.run(['--format', 'json'])).toBe(0);
    const reference = JSON.parse(out.join('')) as PolicyReference;
    const setStatus = reference.elements.find((e) => e.name === 'set-status');
    expect(setStatus?.differences).toEqual([expect.stringMatching(/envoyproxy\/envoy#9559/)]);
    expect(setStatus?.differences?.[0]).toContain('context.Response.StatusReason');
    // Elements without a difference say nothing.
    expect(reference.elements.find((e) => e.name === 'set-method')).not.toHaveProperty('differences');
    out = [];
    expect(await command.run([])).toBe(0);
    expect(out.join('')).toMatch(
      /## set-status\n\nSets the HTTP status code and reason\.\n\n.*\n\nDiffers from API Management: `reason` is not on the status line/,
    );
  });

  it('refuses a format it does not know', async () => {
    await expect(command.run(['--format', 'xml'])).rejects.toThrow(
      new UsageError('--format must be one of md, json, got "xml"'),
    );
  });
});

describe('the portcullis command', () => {
  it('lists policy-reference and runs it', async () => {
    const run = promisify(execFile);
    const { stdout: help } = await run(process.execPath, [cli, '--help']);
    expect(help).toMatch(/^ {2}policy-reference {2}/m);
    const { stdout } = await run(process.execPath, [cli, 'policy-reference'], { maxBuffer: 4 * 1024 * 1024 });
    expect(stdout).toBe(readFileSync(doc, 'utf8'));
  });
});
