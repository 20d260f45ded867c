import {
  CsChar,
  CsDateTime,
  CsDecimal,
  CsDouble,
  CsGuid,
  CsTimeSpan,
  JToken,
  parseDecimalText,
  parseJson,
  toDotNetString,
} from '../expr/index.js';
import type { CachedResponse } from '../policy/index.js';
import type { ByteCodec } from '../state/tiered-cache.js';

/*
 * Values in the external cache: expression runtime values as tagged JSON. Values that only make sense inside one
 * process (a response object, a JWT instance …) are not stored externally (logged, as API Management's store is
 * asynchronous and best effort).
 */
type Encoded =
  | { t: 's'; v: string }
  | { t: 'b'; v: boolean }
  | { t: 'n' }
  | { t: 'i'; v: number }
  | { t: 'l'; v: string }
  | { t: 'd'; v: number }
  | { t: 'm'; v: string | number }
  | { t: 'c'; v: number }
  | { t: 'dt'; v: string; k: string }
  | { t: 'g'; v: string }
  | { t: 'ts'; v: string }
  | { t: 'j'; v: string };

export const valueCodec: ByteCodec<{ value: unknown }> = {
  encode({ value }) {
    let e: Encoded | undefined;
    if (typeof value === 'string') e = { t: 's', v: value };
    else if (typeof value === 'boolean') e = { t: 'b', v: value };
    else if (value === null || value === undefined) e = { t: 'n' };
    else if (typeof value === 'number') e = { t: 'i', v: value };
    else if (typeof value === 'bigint') e = { t: 'l', v: value.toString() };
    else if (value instanceof CsDouble) e = { t: 'd', v: value.v };
    else if (value instanceof CsDecimal) e = { t: 'm', v: value.toString() };
    else if (value instanceof CsChar) e = { t: 'c', v: value.code };
    else if (value instanceof CsDateTime) e = { t: 'dt', v: value.ticks.toString(), k: value.kind };
    else if (value instanceof CsGuid) e = { t: 'g', v: value.value };
    else if (value instanceof CsTimeSpan) e = { t: 'ts', v: value.ticks.toString() };
    else if (value instanceof JToken) e = { t: 'j', v: toDotNetString(value) };
    return e === undefined ? undefined : Buffer.from(JSON.stringify(e));
  },
  decode(bytes) {
    const e = JSON.parse(bytes.toString('utf8')) as Encoded;
    switch (e.t) {
      case 's':
      case 'b':
      case 'i':
        return { value: e.v };
      case 'n':
        return { value: null };
      case 'l':
        return { value: BigInt(e.v) };
      case 'd':
        return { value: new CsDouble(e.v) };
      case 'm':
        // Written as text since decimals kept their digits; a number is the earlier (double) form.
        return { value: typeof e.v === 'string' ? parseDecimalText(e.v) : CsDecimal.fromNumber(e.v) };
      case 'c':
        return { value: new CsChar(e.v) };
      case 'dt':
        return { value: new CsDateTime(BigInt(e.v), e.k as CsDateTime['kind']) };
      case 'g':
        return { value: new CsGuid(e.v) };
      case 'ts':
        return { value: new CsTimeSpan(BigInt(e.v)) };
      case 'j':
        return { value: parseJson(e.v) };
    }
  },
};

/** A cached response in Redis: one JSON line (status, reason, headers), then the body bytes. */
export const responseCodec: ByteCodec<CachedResponse> = {
  encode(value) {
    const head = Buffer.from(
      `${JSON.stringify({ status: value.status, reason: value.reason, headers: value.headers })}\n`,
    );
    return Buffer.concat([head, value.body]);
  },
  decode(bytes) {
    const newline = bytes.indexOf(0x0a);
    const head = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as Omit<CachedResponse, 'body'>;
    return { ...head, body: Buffer.from(bytes.subarray(newline + 1)) };
  },
};
