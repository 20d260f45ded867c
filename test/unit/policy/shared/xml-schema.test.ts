import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../../../src/package-root.js';

/**
 * libxml2 (WebAssembly, about 1 MB) is imported only when a policy validates XML: an engine whose policies validate
 * JSON, or none, never loads it. Checked in a fresh Node process, whose module resolutions a hook records.
 */
function loadsLibxml2(validateAs: 'json' | 'xml'): boolean {
  const script = `
    import { registerHooks } from 'node:module';
    let loaded = false;
    registerHooks({ resolve(specifier, context, next) { if (specifier === 'libxml2-wasm') loaded = true; return next(specifier, context); } });
    const { compilePolicyDocument, readPolicyDocument } = await import('./src/policy/index.ts');
    const xml = '<policies><inbound><validate-content unspecified-content-type-action="prevent" max-size="10" size-exceeded-action="prevent"><content validate-as="${validateAs}" action="prevent" /></validate-content></inbound><backend /><outbound /><on-error /></policies>';
    compilePolicyDocument(readPolicyDocument(xml, { file: 'p.xml' }), { scope: 'operation' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    console.log(String(loaded));
  `;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: packageRoot,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return output.trim().endsWith('true');
}

describe('libxml2 for validate-content', () => {
  it('is loaded when a policy validates XML, and only then', () => {
    expect(loadsLibxml2('json')).toBe(false);
    expect(loadsLibxml2('xml')).toBe(true);
  });
});
