/**
 * The allow-listed .NET surface: one file per .NET area, and this list is all of them. Each file declares its own
 * types (defineType) and extension methods (defineExtensions) completely when it is evaluated, and no file edits
 * another's tables. The order below does not matter: a file that needs another's types imports that file, and
 * core refuses a type name, class or extension method claimed twice, so no file can override one that loaded earlier.
 */
import './authorization.js';
import './collections.js';
import './context.js';
import './convert.js';
import './cryptography.js';
import './datetime.js';
import './decimal.js';
import './encoding.js';
import './enumerator.js';
import './enums.js';
import './guid.js';
import './hash-algorithm-name.js';
import './ip-address.js';
import './json/extensions.js';
import './json/raw.js';
import './json/types.js';
import './jwt.js';
import './linq.js';
import './math.js';
import './nullable.js';
import './oid.js';
import './public-key.js';
import './primitives.js';
import './queue.js';
import './regex.js';
import './rsa.js';
import './rsa-padding.js';
import './stack.js';
import './string-builder.js';
import './string-io.js';
import './string.js';
import './time-zone-info.js';
import './time-zone.js';
import './tuple.js';
import './uri.js';
import './x509-certificate.js';
import './x509-name-type.js';
import './xml/attribute.js';
import './xml/comparers.js';
import './xml/extensions.js';
import './xml/leaves.js';
import './xml/names.js';
import './xml/types.js';
