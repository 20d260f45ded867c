import type { HeaderMap, HeaderMutation, HeaderValueOption, Struct, StructValue } from './messages.js';

/** Header name (lower case, as Envoy sends it) → its values in arrival order. Pseudo-headers keep their `:`. */
export type HeaderFields = Map<string, string[]>;

/**
 * Envoy puts every value in `raw_value`; `value` is read only as a fallback for hand-made test messages. A decoded
 * message without `raw_value` reads it as an empty byte array, so absence is an empty value here.
 */
export function headerFieldsFromMap(map: HeaderMap | null | undefined): HeaderFields {
  const fields: HeaderFields = new Map();
  const headers = map?.headers;
  if (!headers) return fields;
  for (let i = 0; i < headers.length; i++) {
    const header = headers[i]!;
    const raw = header.raw_value;
    const value =
      raw && raw.length > 0
        ? Buffer.isBuffer(raw)
          ? raw.toString('latin1')
          : Buffer.from(raw).toString('latin1')
        : (header.value ?? '');
    // Envoy sends names in lower case already.
    const name = header.key;
    const key = hasUpperCase(name) ? name.toLowerCase() : name;
    const values = fields.get(key);
    if (values) values.push(value);
    else fields.set(key, [value]);
  }
  return fields;
}

export function firstHeader(fields: HeaderFields, name: string): string | undefined {
  return fields.get(name)?.[0];
}

/** One header change for Envoy: `set` replaces every value, `append` adds one. */
export interface HeaderChange {
  readonly name: string;
  readonly value: string;
  readonly append?: boolean;
}

/**
 * Builds Envoy's HeaderMutation. Values go in `raw_value` only: Envoy ignores `value` in mutations, and older
 * versions reject a header that carries both. `append` is the deprecated BoolValue because that is the only append
 * control ext_proc honours (unset = overwrite).
 */
export function headerMutation(
  changes: readonly HeaderChange[],
  removals: readonly string[] = [],
): HeaderMutation | undefined {
  if (changes.length === 0 && removals.length === 0) return undefined;
  const setHeaders: HeaderValueOption[] = changes.map((change) => ({
    header: { key: change.name, raw_value: Buffer.from(change.value, 'latin1') },
    ...(change.append ? { append: { value: true } } : {}),
  }));
  return { set_headers: setHeaders, remove_headers: [...removals] };
}

export type AttributeValue = string | number | boolean | null;

/**
 * Flattens `ProcessingRequest.attributes` (one Struct per filter name, keyed by the attribute expression as
 * configured, e.g. `source.address`) into plain values.
 */
export function attributeValues(attributes: Record<string, Struct> | undefined): Map<string, AttributeValue> {
  const values = new Map<string, AttributeValue>();
  for (const struct of Object.values(attributes ?? {})) {
    for (const [name, value] of Object.entries(struct.fields ?? {})) values.set(name, structScalar(value));
  }
  return values;
}

function hasUpperCase(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code >= 65 && code <= 90) return true;
  }
  return false;
}

/**
 * A decoded google.protobuf.Value names its member in `kind` and reads every other member as a default, so `kind`
 * decides; plain objects (hand-made, or proto-loader's) may lack it.
 */
function structScalar(value: StructValue): AttributeValue {
  switch (value.kind) {
    case 'stringValue':
    case 'string_value':
    case 'numberValue':
    case 'number_value':
    case 'boolValue':
    case 'bool_value':
      return (value as Record<string, AttributeValue>)[value.kind] ?? null;
    case 'nullValue':
    case 'null_value':
    case 'structValue':
    case 'struct_value':
    case 'listValue':
    case 'list_value':
      return null;
  }
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.string_value !== undefined) return value.string_value;
  if (value.numberValue !== undefined) return value.numberValue;
  if (value.number_value !== undefined) return value.number_value;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.bool_value !== undefined) return value.bool_value;
  return null;
}
