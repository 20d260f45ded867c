import { describe, expect, it } from 'vitest';
import type { PolicyLoadError } from '../../../../src/policy/diagnostics.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../../src/policy/document.js';
import { buildPipeline } from '../../../../src/policy/pipeline.js';
import { fakeServices, policies, request, runAll } from '../../../doubles/policy-services.js';

const fragment = readPolicyDocument(
  '<fragment>\n  <set-header name="X-F"><value>f</value></set-header>\n  <set-variable name="v" value="@(1 + 1)" />\n</fragment>',
  { file: 'tag.xml' },
);
const badFragment = readPolicyDocument('<fragment>\n  <rewrite-uri template="/x" />\n</fragment>', {
  file: 'rw.xml',
});
const nested = readPolicyDocument('<fragment><include-fragment fragment-id="tag" /></fragment>', {
  file: 'nested.xml',
});
const fragments = new Map([
  ['tag', fragment],
  ['rw', badFragment],
  ['nested', nested],
]);

function compile(section: 'inbound' | 'outbound', statements: string) {
  return compilePolicyDocument(readPolicyDocument(policies({ [section]: statements }), { file: 'op.xml' }), {
    scope: 'operation',
    fragments: (id) => fragments.get(id),
  });
}

function errors(section: 'inbound' | 'outbound', statements: string): string[] {
  try {
    compile(section, statements);
    return [];
  } catch (err) {
    return (err as PolicyLoadError).diagnostics.map((d) => `${d.file}:${d.line}:${d.column}: ${d.message}`);
  }
}

describe('include-fragment', () => {
  it('inlines the fragment statements where it is included', async () => {
    const op = compile(
      'inbound',
      '<set-variable name="v" value="0" /><include-fragment fragment-id="tag" />',
    );
    const { run } = await runAll(buildPipeline({ operation: op }), request(), fakeServices());
    expect(run.context.request.headers.get('X-F')).toEqual(['f']);
    expect(run.context.variables.get('v')).toBe(2);
  });

  it('checks the fragment for the section it is included in, reporting in the fragment file', () => {
    expect(compile('inbound', '<include-fragment fragment-id="rw" />')).toBeDefined();
    expect(errors('outbound', '<include-fragment fragment-id="rw" />')).toEqual([
      'rw.xml:2:3: <rewrite-uri> is not allowed in the outbound section (allowed: inbound), got it in outbound',
    ]);
  });

  it('names an unknown fragment and refuses nesting', () => {
    expect(errors('inbound', '<include-fragment fragment-id="ghost" />')).toEqual([
      'op.xml:2:10: fragment "ghost" is not defined',
    ]);
    expect(errors('inbound', '<include-fragment fragment-id="nested" />')).toEqual([
      'nested.xml:1:11: a fragment cannot include another fragment',
    ]);
  });

  it('does not take an expression as fragment id', () => {
    expect(errors('inbound', '<include-fragment fragment-id="@(&quot;tag&quot;)" />')[0]).toContain(
      'include-fragment/@fragment-id does not allow policy expressions',
    );
  });
});
