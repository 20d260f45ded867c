import { describe, expect, it, vi } from 'vitest';

// Every file of src/expr/library that index.ts lists (json/types.ts loads the rest of json/).
const LIBRARY_FILES = {
  authorization: () => import('../../../src/expr/library/authorization.js'),
  collections: () => import('../../../src/expr/library/collections.js'),
  context: () => import('../../../src/expr/library/context.js'),
  convert: () => import('../../../src/expr/library/convert.js'),
  cryptography: () => import('../../../src/expr/library/cryptography.js'),
  datetime: () => import('../../../src/expr/library/datetime.js'),
  encoding: () => import('../../../src/expr/library/encoding.js'),
  enums: () => import('../../../src/expr/library/enums.js'),
  enumerator: () => import('../../../src/expr/library/enumerator.js'),
  guid: () => import('../../../src/expr/library/guid.js'),
  json: () => import('../../../src/expr/library/json/types.js'),
  'json/extensions': () => import('../../../src/expr/library/json/extensions.js'),
  'json/raw': () => import('../../../src/expr/library/json/raw.js'),
  jwt: () => import('../../../src/expr/library/jwt.js'),
  linq: () => import('../../../src/expr/library/linq.js'),
  math: () => import('../../../src/expr/library/math.js'),
  nullable: () => import('../../../src/expr/library/nullable.js'),
  primitives: () => import('../../../src/expr/library/primitives.js'),
  regex: () => import('../../../src/expr/library/regex.js'),
  string: () => import('../../../src/expr/library/string.js'),
  'string-builder': () => import('../../../src/expr/library/string-builder.js'),
  'string-io': () => import('../../../src/expr/library/string-io.js'),
  'time-zone': () => import('../../../src/expr/library/time-zone.js'),
  'time-zone-info': () => import('../../../src/expr/library/time-zone-info.js'),
  uri: () => import('../../../src/expr/library/uri.js'),
  'xml/attribute': () => import('../../../src/expr/library/xml/attribute.js'),
  'xml/comparers': () => import('../../../src/expr/library/xml/comparers.js'),
  'xml/extensions': () => import('../../../src/expr/library/xml/extensions.js'),
  'xml/leaves': () => import('../../../src/expr/library/xml/leaves.js'),
  'xml/names': () => import('../../../src/expr/library/xml/names.js'),
  'xml/types': () => import('../../../src/expr/library/xml/types.js'),
};
type LibraryFile = keyof typeof LIBRARY_FILES;
const ALL = Object.keys(LIBRARY_FILES) as LibraryFile[];

type Core = typeof import('../../../src/expr/runtime/core.js');

/** Loads the library files in `order` into a fresh module graph (fresh tables), without index.ts. */
async function loadInOrder(order: readonly LibraryFile[]): Promise<Core> {
  vi.resetModules();
  for (const file of order) await LIBRARY_FILES[file]();
  return import('../../../src/expr/runtime/core.js');
}

/** What the compiler and the runtime can reach: every type by every name, and where a member call lands. */
function surface(core: Core): { types: string[]; members: string[] } {
  const types = [...core.TYPES_BY_NAME].map(([name, info]) => `${name} -> ${info.fullName}`).sort();
  return { types, members: [...core.KNOWN_MEMBERS].sort() };
}

describe('library tables', () => {
  it('each file declares its tables completely: extension methods and == need no index.ts', async () => {
    const core = await loadInOrder(['jwt', 'cryptography', 'json', 'linq', 'primitives']);
    const { JValue } = await import('../../../src/expr/library/json/tokens.js');
    const { equals } = await import('../../../src/expr/runtime/convert.js');
    const method = (type: string, name: string) => core.findMethod(core.TYPES_BY_NAME.get(type)!, name);

    expect(method('string', 'AsJwt')).toBeTypeOf('function');
    expect(method('string', 'TryParseBasic')).toBeTypeOf('function');
    expect(method('Array', 'Encrypt')).toBeTypeOf('function');
    expect(method('Array', 'Where')).toBeTypeOf('function');
    expect(core.KNOWN_MEMBERS.has('AsJwt')).toBe(true);
    expect(equals(new JValue('String', 'x'), 'x')).toBe(true);
    expect(equals('x', new JValue('String', 'x'))).toBe(true);
  });

  it('the same surface whatever order the files load in', async () => {
    const forward = surface(await loadInOrder(ALL));
    const reversed = surface(await loadInOrder([...ALL].reverse()));
    const leavesFirst = surface(
      await loadInOrder(['xml/types', 'xml/extensions', 'regex', 'jwt', 'cryptography', ...ALL]),
    );
    expect(reversed).toEqual(forward);
    expect(leavesFirst).toEqual(forward);
    expect(forward.types).toContain('byte -> System.Byte');
  });

  it('refuses a second claim on a type name, a class or an extension method, and keeps the first', async () => {
    const core = await loadInOrder(ALL);
    const { CsComparer } = await import('../../../src/expr/library/string.js');
    const stringType = core.TYPES_BY_NAME.get('string')!;

    expect(() => core.defineType({ name: 'Other', aliases: ['string'] })).toThrow(
      new TypeError('type name string is claimed by both System.String and Other'),
    );
    expect(() => core.defineType({ name: 'Other', classes: [CsComparer] })).toThrow(
      new TypeError('class CsComparer is claimed by both System.StringComparer and Other'),
    );
    expect(() =>
      core.defineExtensions({ declaredBy: 'a test', receiver: stringType, methods: { AsJwt: () => null } }),
    ).toThrow(
      new TypeError(
        "extension method System.String.AsJwt is declared by both API Management's Jwt and Basic extensions and a test",
      ),
    );
    expect(core.TYPES_BY_NAME.get('string')).toBe(stringType);
    expect(core.TYPES_BY_NAME.has('Other')).toBe(false);
    expect(core.findMethod(stringType, 'AsJwt')).toBeTypeOf('function');
  });

  it('a method two Extensions classes share goes by the items, whichever file loaded first', async () => {
    for (const order of [
      ['xml/extensions', 'json/extensions'],
      ['json/extensions', 'xml/extensions'],
    ] as const) {
      const core = await loadInOrder([...order, 'collections']);
      const { parseXDocument } = await import('../../../src/expr/library/xml/parse.js');
      const { parseJson } = await import('../../../src/expr/library/json/parse.js');
      const { DEFAULT_LIMITS } = await import('../../../src/expr/limits.js');
      const rt = { limits: DEFAULT_LIMITS, steps: 0, regexMilliseconds: 0 } as unknown as Parameters<
        import('../../../src/expr/runtime/core.js').Method
      >[0];
      const descendants = core.findMethod(core.TYPES_BY_NAME.get('Array')!, 'Descendants')!;
      const xml = parseXDocument('<a><b><c/></b></a>').root!;
      const json = parseJson('{"b":{"c":1}}', rt);
      expect((descendants(rt, [xml], [], []) as unknown[]).length).toBe(2);
      expect((descendants(rt, [json], [], []) as unknown[]).length).toBe(4);
      expect(() => descendants(rt, [1], [], [])).toThrow(
        "Unable to cast object of type 'System.Int32' to type 'Newtonsoft.Json.Linq.JToken'",
      );
    }
  });
});
