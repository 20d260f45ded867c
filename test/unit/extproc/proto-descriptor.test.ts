import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { descriptorPath, extProcDescriptor } from '../../../scripts/proto-descriptor.js';

describe('the precompiled ext_proc descriptor the engine loads', () => {
  it('is what the .proto files under proto/ parse to (after a change there: node --import tsx scripts/proto-descriptor.ts)', () => {
    expect(readFileSync(descriptorPath, 'utf8')).toBe(extProcDescriptor());
  });
});
