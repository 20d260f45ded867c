import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DECLARED, ELEMENT_LIST, ELEMENTS } from '../../../src/policy/elements/index.js';
import { policyReference } from '../../../src/policy/reference.js';

describe('element registry', () => {
  it('lists each element once, declared in the file named after it', () => {
    expect(ELEMENTS.size).toBe(ELEMENT_LIST.length);
    for (const e of ELEMENT_LIST) {
      const file = new URL(`../../../src/policy/elements/${e.name}.ts`, import.meta.url);
      expect(existsSync(file), e.name).toBe(true);
      expect(readFileSync(file, 'utf8')).toContain(`name: '${e.name}'`);
    }
  });

  it('never both runs and declares an element', () => {
    for (const name of DECLARED.keys()) expect(ELEMENTS.has(name), name).toBe(false);
  });

  it('declares where each element may appear', () => {
    for (const e of ELEMENT_LIST) {
      expect(e.sections.length, e.name).toBeGreaterThan(0);
      expect(e.scopes.length, e.name).toBeGreaterThan(0);
    }
  });

  it('generates the reference from the declarations', () => {
    const md = policyReference();
    for (const e of ELEMENT_LIST) expect(md).toContain(`## ${e.name}\n`);
    expect(md).toContain('| `send-service-bus-message` | needs Azure Service Bus |');
    expect(md).toContain(
      '| `exists-action` | override \\| skip \\| append \\| delete | default `override` | yes |',
    );
  });
});
