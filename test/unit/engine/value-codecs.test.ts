import { describe, expect, it } from 'vitest';
import { valueCodec } from '../../../src/engine/value-codecs.js';
import { CsDecimal, parseDecimalText, toDotNetString } from '../../../src/expr/index.js';

describe('valueCodec: a decimal in the external cache', () => {
  it('keeps every digit and the scale (1.50 stays 1.50, 28 digits stay 28)', () => {
    for (const text of ['1.50', '0.1234567890123456789012345678', '-79228162514264337593543950335']) {
      const bytes = valueCodec.encode({ value: parseDecimalText(text) });
      const back = valueCodec.decode(bytes!).value;
      expect(back).toBeInstanceOf(CsDecimal);
      expect(toDotNetString(back)).toBe(text);
    }
  });

  it('still reads the earlier form, a number', () => {
    const back = valueCodec.decode(Buffer.from(JSON.stringify({ t: 'm', v: 2.5 }))).value;
    expect(toDotNetString(back)).toBe('2.5');
  });
});
