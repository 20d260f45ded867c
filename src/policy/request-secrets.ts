/**
 * The secret values of one request, replaced by `***` in every text of the request that leaves its run — a log
 * line, a trace entry (the `trace` element, context.Trace), a debug trace's values and variables, LastError.Message —
 * wherever they occur, so that a concatenation (`"x " + context.Request.Headers["Authorization"]`) is caught where no
 * shape of redact.ts would be:
 * - the secret named values (the pipeline's: `{{name}}` put them into the policy's text),
 * - the credentials the request carried: the values of credential headers and query parameters (redact.ts names
 *   them), an authorization scheme's token, a Basic password, each cookie's value,
 * - the tokens the gateway obtained for it (its identities, the credential manager), added as they are obtained,
 * - the tokens its policies stored in variables (validate-jwt's output-token-variable-name, AsJwt): a Jwt, or a
 *   string that is one.
 * A request that writes nothing pays nothing: the set is made on its first text (or token), the request's
 * credentials read then from the request as it came, not as policies changed it.
 */
import { Jwt, parseBasic, parseJwt, type VariablesModel } from '../expr/index.js';
import { credentialHeaderNames, credentialQueryNames, SecretValues } from '../redact.js';

/** The request as it came (what runner.ts's RequestDescription says of it): where its credentials are read from. */
export interface CarriedRequest {
  readonly headers: Iterable<readonly [string, string | readonly string[]]>;
  readonly url: string | URL;
}

export class RequestSecrets {
  #values: SecretValues | undefined;
  /** The variables' values last looked at, by name: a token is looked for in a value once. */
  #seen: Map<string, unknown> | undefined;

  constructor(
    /** The secret named values, any length. */
    private readonly named: readonly string[],
    private readonly request: CarriedRequest,
    private readonly variables: VariablesModel,
  ) {}

  /** A token the gateway obtained for this request: never shown in what the request logs or traces. */
  add(token: string): void {
    this.#set().add(token);
  }

  /** `text` with every secret value of the request replaced by `***` (the shapes are redact.ts's redactText). */
  redact(text: string): string {
    const values = this.#set();
    if (this.variables.size > 0) this.#storedTokens(values);
    return values.size === 0 ? text : values.redact(text);
  }

  #set(): SecretValues {
    if (this.#values === undefined) {
      this.#values = new SecretValues(this.named);
      carriedCredentials(this.request, this.#values);
    }
    return this.#values;
  }

  #storedTokens(values: SecretValues): void {
    this.#seen ??= new Map();
    const seen = this.#seen;
    for (const [name, value] of this.variables.entries()) {
      if (seen.has(name) && seen.get(name) === value) continue;
      seen.set(name, value);
      const token = tokenOf(value);
      if (token !== undefined) values.add(token);
    }
  }
}

/**
 * The token a variable holds — a Jwt, or a string that is one (with or without `Bearer `) — or undefined. A trace
 * shows such a variable as `***`; its claims are shown where a policy reads them.
 */
export function tokenOf(value: unknown): string | undefined {
  if (value instanceof Jwt) return value.token;
  // Cheap tests first: most strings are not three dot-separated parts.
  if (typeof value !== 'string' || value.length < 16 || value.indexOf('.') < 0) return undefined;
  return parseJwt(value)?.token;
}

/** Adds the credentials the request carried to `values` (see the file comment). */
function carriedCredentials(request: CarriedRequest, values: SecretValues): void {
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    if (!credentialHeaderNames.has(lower)) continue;
    for (const one of typeof value === 'string' ? [value] : value) headerCredentials(lower, one, values);
  }
  const url = request.url;
  const search = typeof url === 'string' ? queryOf(url) : url.search;
  if (search === '') return;
  for (const [name, value] of new URLSearchParams(search))
    if (credentialQueryNames.has(name.toLowerCase())) values.add(value);
}

/**
 * A header's credentials, as an expression can take them out: each cookie's value, an authorization scheme's
 * credentials (RFC 9110 §11.4) and a Basic pair's password decoded (AsBasic), else the whole value. What is not a
 * credential stays (a cookie's name, the scheme), so a line still says what was sent: `Bearer ***`, `sid=***`.
 */
function headerCredentials(name: string, value: string, values: SecretValues): void {
  if (name === 'cookie') {
    for (const pair of value.split(';')) {
      const equals = pair.indexOf('=');
      values.add((equals < 0 ? pair : pair.slice(equals + 1)).trim());
    }
    return;
  }
  const authorization = name.endsWith('authorization');
  const scheme = authorization ? /^\s*[A-Za-z][\w.+-]*\s+(\S.*?)\s*$/.exec(value) : null;
  values.add(scheme === null ? value.trim() : scheme[1]!);
  if (!authorization) return;
  const basic = parseBasic(value);
  if (basic !== null) {
    values.add(`${basic.userId}:${basic.password}`);
    values.add(basic.password);
  }
}

function queryOf(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return '';
  const end = url.indexOf('#', start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}
