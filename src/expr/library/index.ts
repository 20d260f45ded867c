/**
 * The allow-listed .NET surface. Each module defines its types with defineType (one .NET area per file); importing a
 * module registers it. The order matters only where a module needs another's types at load time.
 */
import './primitives.js';
import './string.js';
import './enums.js';
import './collections.js';
import './linq.js';
import './json.js';
import './xml.js';
import './context.js';
import './jwt.js';
import './text.js';
import './datetime.js';
import './misc.js';
import './regex.js';
import { setValueEquals } from '../runtime/convert.js';
import { CsEnum } from '../runtime/enum.js';
import { JValue, tokenTo } from './json.js';

// `==` between an enum and an enum compares values; a JValue compared with a primitive compares its value (C# would
// compare references after an implicit conversion — always false — which no policy relies on).
setValueEquals((a, b) => {
  if (a instanceof CsEnum && b instanceof CsEnum) return a.enumName === b.enumName && a.value === b.value;
  if (a instanceof JValue && b instanceof JValue) return a.kind === b.kind && a.value === b.value;
  if (a instanceof JValue && (typeof b === 'string' || typeof b === 'boolean' || typeof b === 'number')) {
    return (
      a.kind !== 'Null' &&
      tokenTo(a, typeof b === 'string' ? 'string' : typeof b === 'boolean' ? 'bool' : 'int') === b
    );
  }
  if (b instanceof JValue) return false;
  return false;
});
