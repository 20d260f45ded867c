/**
 * Credentials never leave the process in a log line, a trace or an error message. Shared by every module (it
 * imports nothing): the engine's access log and debug trace, the `trace` element's output, LastError messages, the
 * service's, the MCP endpoint's and the management API's log lines, and `up`'s relay of its children's output.
 *
 * What counts as a credential: the query parameters in `credentialQueryNames` (plus an API's own subscription-key
 * parameter name, passed as `extraNames`), the headers in `credentialHeaderNames`, an HTTP authorization scheme's
 * token (`Bearer …`, `Basic …`), a JSON Web Token (`eyJ…`, wherever it is), and the password of a URL's user information
 * (`redis://:secret@host`). Each value becomes `***`, the marker secret named values already use; names stay, so a
 * line still says what was sent.
 *
 * What has no shape of its own (a secret named value, an opaque token, a credential copied into a sentence) is known
 * only by its value: `SecretValues` replaces given values wherever they occur (policy/request-secrets.ts keeps one
 * request's).
 */

/** Replaces a credential's value. */
export const redactionMarker = '***';

/**
 * Query parameter names whose values are credentials, lower case: API Management's subscription key, the usual API
 * key spellings, OAuth's codes, tokens and client secrets (RFC 6749, RFC 6750 §2.3, RFC 7636), signatures.
 */
export const credentialQueryNames: ReadonlySet<string> = new Set([
  'subscription-key',
  'api-key',
  'api_key',
  'apikey',
  'key',
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'code',
  'code_verifier',
  'client_secret',
  'client_assertion',
  'assertion',
  'password',
  'sig',
  'signature',
]);

/** Header names whose values are credentials, lower case. */
export const credentialHeaderNames: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'ocp-apim-subscription-key',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  // The operator's debug-trace key (see engine/exchange/summary.ts).
  'x-portcullis-trace',
]);

/**
 * A URL (absolute, or a path with its query) with the values of credential query parameters and the password of
 * its user information replaced. Everything else is kept byte for byte, so the line still shows what was asked.
 * `extraNames`: further credential parameter names (an API's subscription-key parameter), any case.
 */
export function redactUrl(url: string, extraNames?: readonly string[]): string {
  const queryStart = url.indexOf('?');
  const head = url.includes('@')
    ? redactUserInfo(queryStart < 0 ? url : url.slice(0, queryStart))
    : undefined;
  if (queryStart < 0) return head ?? url;
  const fragmentStart = url.indexOf('#', queryStart);
  const query = fragmentStart < 0 ? url.slice(queryStart + 1) : url.slice(queryStart + 1, fragmentStart);
  const extra = extraNames?.map((name) => name.toLowerCase());
  let changed = head !== undefined;
  const parts = query.split('&').map((part) => {
    const equals = part.indexOf('=');
    const rawName = equals < 0 ? part : part.slice(0, equals);
    if (equals < 0 || !isCredentialName(decodeName(rawName), extra)) return part;
    changed = true;
    return `${rawName}=${redactionMarker}`;
  });
  if (!changed) return url;
  const fragment = fragmentStart < 0 ? '' : url.slice(fragmentStart);
  return `${head ?? url.slice(0, queryStart)}?${parts.join('&')}${fragment}`;
}

type HeaderInput = Iterable<readonly [string, string]> | Readonly<Record<string, unknown>>;

/** Headers with the values of credential headers replaced: pairs stay pairs, a record stays a record. */
export function redactHeaders(headers: Iterable<readonly [string, string]>): [string, string][];
export function redactHeaders(headers: Readonly<Record<string, unknown>>): Record<string, unknown>;
export function redactHeaders(headers: HeaderInput): [string, string][] | Record<string, unknown> {
  if (isIterable(headers)) {
    return [...headers].map(([name, value]): [string, string] => [
      name,
      credentialHeaderNames.has(name.toLowerCase()) ? redactionMarker : value,
    ]);
  }
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = credentialHeaderNames.has(name.toLowerCase()) ? redactionMarker : value;
  }
  return out;
}

/*
 * Free text (an error message, a stack, a policy's trace message, a child's log line) has no structure to rely on:
 * each pattern below finds one shape a credential takes in text. All are linear: character classes, fixed
 * alternatives and bounded runs, no nested quantifiers. Each is idempotent (a redacted text redacts to itself).
 */

const queryNames = [...credentialQueryNames].map(escapeRegExp).join('|');
const headerNames = [...credentialHeaderNames].map(escapeRegExp).join('|');

/** `name=value` for a credential name, at the start of a query parameter, a form field or a word. */
const queryParameterPattern = new RegExp(`(^|[?&;,\\s"'(\\[{])(${queryNames})=[^&\\s"',;)\\]}#]*`, 'gi');
/** `Authorization: value` / `"authorization":"value"` / `cookie=value`: the header's value up to the line end or quote. */
const headerPattern = new RegExp(`(^|[^\\w-])(${headerNames})("?\\s*[:=]\\s*"?)[^\\r\\n"]+`, 'gi');
/** An authorization scheme and its credentials (RFC 9110 §11.4), wherever the header name itself was lost. */
const schemePattern = /\b(Bearer|Basic|Digest|Negotiate|NTLM|SharedAccessSignature)\s+[\w.~+/=:%,-]+/g;
/** `scheme://user:password@`: the password. */
const userInfoPattern = /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^/\s:@]*):[^/\s@]+@/gi;
/**
 * A compact JWS or JWE (RFC 7515 §7.1, RFC 7516 §7.1) whose header is JSON written without a leading space, as every
 * issuer writes it (`{"` encodes as `eyJ`): three or five base64url parts. Its claims are shown where a policy reads
 * them; the token itself is a bearer credential.
 */
const jwtPattern = /\beyJ[\w-]+\.[\w-]*\.[\w-]*(?:\.[\w-]*\.[\w-]*)?/g;
/** Cheap tests that a text could hold a shape, so most log lines (one per request) skip the full patterns. */
const headerHint = /authorization|cookie|key|trace/i;
const schemeHint = /Bearer|Basic|Digest|Negotiate|NTLM|SharedAccessSignature/;

/** A text with every credential shape it contains replaced (see the patterns above). */
export function redactText(text: string): string {
  let out = text;
  if (out.includes('://') && out.includes('@')) out = out.replace(userInfoPattern, `$1:${redactionMarker}@`);
  const assigns = out.includes('=');
  if ((assigns || out.includes(':')) && headerHint.test(out))
    out = out.replace(headerPattern, `$1$2$3${redactionMarker}`);
  if (schemeHint.test(out)) out = out.replace(schemePattern, `$1 ${redactionMarker}`);
  if (out.includes('eyJ')) out = out.replace(jwtPattern, redactionMarker);
  if (assigns) out = out.replace(queryParameterPattern, `$1$2=${redactionMarker}`);
  return out;
}

/**
 * A log line's fields with every string redacted (`redact`: redactText unless told), and the values of
 * credential-named fields (a `headers` record, an `authorization` field) replaced. Nested objects and arrays are
 * followed a few levels deep; what is unchanged is returned as is, so a clean line costs no copy.
 */
export function redactFields<T>(value: T, depth = 4, redact: (text: string) => string = redactText): T {
  if (typeof value === 'string') return redact(value) as T;
  if (value === null || typeof value !== 'object' || depth === 0) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const redacted = redactFields(item, depth - 1, redact);
      if (redacted !== item) {
        copy ??= [...value];
        copy[index] = redacted;
      }
    });
    return (copy ?? value) as T;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    const redacted =
      credentialHeaderNames.has(key.toLowerCase()) && item !== undefined && item !== null
        ? redactionMarker
        : redactFields(item, depth - 1, redact);
    if (redacted !== item) {
      copy ??= { ...record };
      copy[key] = redacted;
    }
  }
  return (copy ?? value) as T;
}

/**
 * The shortest value found secret at run time (a request's credential, an obtained token) that SecretValues replaces:
 * a token or a key is longer; a shorter cookie value (`en`, `dark`) would turn ordinary words into `***`.
 */
export const minSecretChars = 6;

/**
 * Values known to be secret (a secret named value, a credential a request carried, a token the gateway obtained),
 * each replaced by `***` wherever it occurs in a text: inside a sentence or a concatenation too, where no shape
 * would find it. The longest is replaced first, so a value that contains another goes whole. Empty, it costs a length
 * test per text.
 */
export class SecretValues {
  /** Longest first. */
  #values: string[] = [];
  readonly #known = new Set<string>();

  /** `values`: secret whatever their length (the operator said so). */
  constructor(values: Iterable<string> = []) {
    for (const value of values) this.#insert(value);
    this.#sort();
  }

  get size(): number {
    return this.#values.length;
  }

  /**
   * Adds a value found secret at run time; one shorter than `minChars` is ignored, as it would be replaced wherever
   * those few characters happen to appear. Returns whether it was new.
   */
  add(value: string, minChars = minSecretChars): boolean {
    if (value.length < minChars || !this.#insert(value)) return false;
    this.#sort();
    return true;
  }

  redact(text: string): string {
    let out = text;
    for (const value of this.#values) if (out.includes(value)) out = out.split(value).join(redactionMarker);
    return out;
  }

  #insert(value: string): boolean {
    if (value.length === 0 || this.#known.has(value)) return false;
    this.#known.add(value);
    this.#values.push(value);
    return true;
  }

  #sort(): void {
    if (this.#values.length > 1) this.#values.sort((a, b) => b.length - a.length);
  }
}

function isCredentialName(name: string, extra: readonly string[] | undefined): boolean {
  const lower = name.toLowerCase();
  return credentialQueryNames.has(lower) || (extra?.includes(lower) ?? false);
}

/** A query parameter name as a server reads it (`+` is a space; a bad escape is kept as written). */
function decodeName(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

function redactUserInfo(head: string): string | undefined {
  const redacted = head.replace(userInfoPattern, `$1:${redactionMarker}@`);
  return redacted === head ? undefined : redacted;
}

function isIterable(value: HeaderInput): value is Iterable<readonly [string, string]> {
  return typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function';
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
