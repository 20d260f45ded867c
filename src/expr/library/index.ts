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
