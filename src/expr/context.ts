/**
 * The `context` object that policy expressions see, as mutable TypeScript classes the policy runner creates per
 * request and updates as policies run (set-header → request.headers, rewrite-uri → request.url, set-variable →
 * variables, …). Expressions reach these objects only through the member tables in library/context.ts, which list
 * exactly API Management's members; the TypeScript API here is for our own code.
 */
import { CsDateTime, CsGuid, CsTimeSpan } from './runtime/values.js';

/** IReadOnlyDictionary<string, string[]>: several values per name, insertion order kept. */
export class StringValuesMap {
  readonly #entries = new Map<string, { name: string; values: string[] }>();
  readonly #fold: boolean;

  constructor(caseInsensitive: boolean, init?: Iterable<readonly [string, string | readonly string[]]>) {
    this.#fold = caseInsensitive;
    if (init) for (const [name, values] of init) this.append(name, values);
  }
  #key(name: string): string {
    return this.#fold ? name.toLowerCase() : name;
  }
  get caseInsensitive(): boolean {
    return this.#fold;
  }
  get size(): number {
    return this.#entries.size;
  }
  has(name: string): boolean {
    return this.#entries.has(this.#key(name));
  }
  /** The values under `name`, or undefined. The array is a copy. */
  get(name: string): string[] | undefined {
    const entry = this.#entries.get(this.#key(name));
    return entry ? [...entry.values] : undefined;
  }
  /** Values joined with "," as API Management's GetValueOrDefault does, or undefined. */
  getJoined(name: string): string | undefined {
    const entry = this.#entries.get(this.#key(name));
    return entry ? entry.values.join(',') : undefined;
  }
  /** Replaces every value under `name` (the spelling of the name becomes `name`). */
  set(name: string, values: string | readonly string[]): void {
    this.#entries.set(this.#key(name), { name, values: typeof values === 'string' ? [values] : [...values] });
  }
  append(name: string, values: string | readonly string[]): void {
    const list = typeof values === 'string' ? [values] : values;
    const entry = this.#entries.get(this.#key(name));
    if (entry) entry.values.push(...list);
    else this.#entries.set(this.#key(name), { name, values: [...list] });
  }
  delete(name: string): boolean {
    return this.#entries.delete(this.#key(name));
  }
  clear(): void {
    this.#entries.clear();
  }
  names(): string[] {
    return [...this.#entries.values()].map((e) => e.name);
  }
  *entries(): IterableIterator<[string, string[]]> {
    for (const e of this.#entries.values()) yield [e.name, [...e.values]];
  }
  /** The stored array itself, for the expression runtime's GetValueOrDefault fast path (never mutated there). */
  peek(name: string): readonly string[] | undefined {
    return this.#entries.get(this.#key(name))?.values;
  }
}

/** HTTP headers: names compare case-insensitively. */
export class HeaderCollection extends StringValuesMap {
  constructor(init?: Iterable<readonly [string, string | readonly string[]]>) {
    super(true, init);
  }
}

/** Query parameters of a URL: names compare case-sensitively, as in the URL itself. */
export class QueryCollection extends StringValuesMap {
  constructor(init?: Iterable<readonly [string, string | readonly string[]]>) {
    super(false, init);
  }
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/**
 * A URL path as policies see it: percent-decoded, except the escapes of reserved characters (`%2F` stays `%2F`,
 * as decodeURI keeps it) and of "%" itself, so that `encodeUrlPath` gives the same path back and an encoded slash
 * is never turned into a separator or encoded twice.
 */
export function decodeUrlPath(encoded: string): string {
  if (!encoded.includes('%')) return encoded;
  try {
    // decodeURI turns "%2525" into "%25": the "%" escape survives, the way decodeURI keeps "%2F".
    return decodeURI(encoded.replaceAll('%25', '%2525'));
  } catch {
    // A malformed escape (`%ZZ`, a lone `%`, bytes that are not UTF-8) stays as written, as .NET's Uri leaves
    // what it cannot unescape; the runs of escapes around it are decoded on their own.
    return encoded.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURI(run.replaceAll('%25', '%2525'));
      } catch {
        return run;
      }
    });
  }
}

/** The inverse of `decodeUrlPath`: escapes what a path may not hold, leaving the escapes it kept as they are. */
export function encodeUrlPath(path: string): string {
  if (!path.includes('%')) return encodeURI(path);
  return path
    .split(/(%[0-9A-Fa-f]{2})/)
    .map((part, index) => (index % 2 === 1 ? part : encodeURI(part)))
    .join('');
}

/** IUrl. `path` starts with "/" (see `decodeUrlPath`); `query` holds decoded names and values. */
export class UrlModel {
  scheme: string;
  host: string;
  port: number;
  path: string;
  query: QueryCollection;

  constructor(init: { scheme: string; host: string; port?: number; path?: string; query?: QueryCollection }) {
    this.scheme = init.scheme;
    this.host = init.host;
    this.port = init.port ?? DEFAULT_PORTS[init.scheme] ?? 80;
    this.path = init.path ?? '/';
    this.query = init.query ?? new QueryCollection();
  }

  /** Parses an absolute URL ("https://h:8443/p?a=1&a=2"), or reads one parsed already (never changing it). */
  static parse(text: string | URL): UrlModel {
    const u = typeof text === 'string' ? new URL(text) : text;
    const query = new QueryCollection();
    for (const [k, v] of u.searchParams) query.append(k, v);
    const scheme = u.protocol.replace(/:$/, '');
    return new UrlModel({
      scheme,
      host: u.hostname,
      port: u.port ? Number(u.port) : (DEFAULT_PORTS[scheme] ?? 80),
      path: decodeUrlPath(u.pathname),
      query,
    });
  }

  clone(): UrlModel {
    return new UrlModel({
      scheme: this.scheme,
      host: this.host,
      port: this.port,
      path: this.path,
      query: new QueryCollection(this.query.entries()),
    });
  }

  /** "?a=1&b=2" or "" — the form API Management's QueryString has. */
  get queryString(): string {
    const parts: string[] = [];
    for (const [name, values] of this.query.entries()) {
      for (const v of values) parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(v)}`);
    }
    return parts.length ? `?${parts.join('&')}` : '';
  }

  /** scheme://host[:port]/path?query, the port omitted when it is the scheme's default. */
  toString(): string {
    const port = DEFAULT_PORTS[this.scheme] === this.port ? '' : `:${this.port}`;
    return `${this.scheme}://${this.host}${port}${encodeUrlPath(this.path)}${this.queryString}`;
  }
}

/**
 * IMessageBody. Reading with `preserveContent: false` (API Management's default) consumes the body: a second read
 * fails, and the runner must treat the message as having an empty body from then on (APIM forwards nothing).
 */
export class MessageBody {
  #bytes: Buffer;
  #consumed = false;

  constructor(bytes: Buffer | string) {
    this.#bytes = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  }
  get bytes(): Buffer {
    return this.#bytes;
  }
  /** True once an expression read the body without preserveContent. */
  get consumed(): boolean {
    return this.#consumed;
  }
  /** Replaces the content (set-body) and makes the body readable again. */
  replace(bytes: Buffer | string): void {
    this.#bytes = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    this.#consumed = false;
  }
  /** Used by the expression runtime: returns the bytes or throws when already consumed. */
  read(preserveContent: boolean): Buffer {
    if (this.#consumed) {
      throw new BodyConsumedError();
    }
    if (!preserveContent) this.#consumed = true;
    return this.#bytes;
  }
}

export class BodyConsumedError extends Error {
  constructor() {
    super('The message body has already been read without preserveContent: true and cannot be read again');
  }
}

export class RequestModel {
  method: string;
  url: UrlModel;
  /** The URL as the client sent it (API suffix included), untouched by rewrite-uri / set-backend-service. */
  readonly originalUrl: UrlModel;
  headers: HeaderCollection;
  body: MessageBody | null;
  ipAddress: string;
  /** Template parameters of the matched operation (`/courses/{courseID}` → courseID). */
  matchedParameters: Map<string, string>;
  /** The client certificate (X509Certificate2) when the client presented one on a TLS connection. */
  certificate: CertificateModel | null;
  /**
   * The base URL the request goes to once an operation matched (the runner sets it): the one set-backend-service
   * chose, else the API's service URL; undefined when there is none (no operation matched, a side request).
   */
  backendBase: (() => string | undefined) | undefined;
  #parsedBase: { readonly text: string; readonly url: URL } | undefined;

  constructor(init: {
    method: string;
    url: UrlModel | string;
    /** The URL the client sent when it differs from `url` (which the API's URL suffix is taken from). */
    originalUrl?: UrlModel;
    headers?: HeaderCollection;
    body?: MessageBody | Buffer | string | null;
    ipAddress?: string;
    matchedParameters?: Map<string, string> | Record<string, string>;
    certificate?: unknown;
  }) {
    this.method = init.method;
    this.url = typeof init.url === 'string' ? UrlModel.parse(init.url) : init.url;
    this.originalUrl = init.originalUrl ?? this.url.clone();
    this.headers = init.headers ?? new HeaderCollection();
    this.body = toBody(init.body);
    this.ipAddress = init.ipAddress ?? '';
    const mp = init.matchedParameters;
    this.matchedParameters = mp instanceof Map ? mp : new Map(Object.entries(mp ?? {}));
    this.certificate = CertificateModel.from(init.certificate);
    this.backendBase = undefined;
  }

  /**
   * `context.Request.Url` as API Management gives it: the URL the request is forwarded to — the backend's base URL
   * (its path included) followed by the operation's path as rewrite-uri left it, and the query — so a policy reads
   * the backend's host (`Url.Host.Contains("…azurewebsites.net")` after set-backend-service) and can call the
   * backend itself (`send-request` to `Url.ToString()`), as Microsoft's public policy snippets do. Without a
   * backend (no operation matched), the URL the client called. The query is this request's own collection.
   */
  get backendUrl(): UrlModel {
    const base = this.backendBase?.();
    if (base === undefined) return this.originalUrl;
    if (this.#parsedBase?.text !== base) this.#parsedBase = { text: base, url: new URL(base) };
    const parsed = this.#parsedBase.url;
    const scheme = parsed.protocol.replace(/:$/, '');
    const basePath = decodeUrlPath(parsed.pathname).replace(/\/+$/, '');
    return new UrlModel({
      scheme,
      host: parsed.hostname,
      port: parsed.port ? Number(parsed.port) : (DEFAULT_PORTS[scheme] ?? 80),
      path: `${basePath}${this.url.path}`,
      query: this.url.query,
    });
  }
}

/**
 * The client's TLS certificate (X509Certificate2 to expressions). Built from the transport's description of the
 * connection's certificate; the fields keep that description's names so policy elements read them directly.
 */
export class CertificateModel {
  readonly pem: string;
  readonly raw: Buffer;
  readonly thumbprint: string;
  readonly serialNumber: string;
  readonly subject: string;
  readonly issuer: string;
  readonly commonName: string | null;
  readonly dnsNames: readonly string[];
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly trusted: boolean;
  readonly issuerThumbprint: string | null;
  readonly issuerCertificateId: string | null;
  readonly revoked: boolean | undefined;

  constructor(init: Omit<CertificateModel, never>) {
    this.pem = init.pem;
    this.raw = init.raw;
    this.thumbprint = init.thumbprint;
    this.serialNumber = init.serialNumber;
    this.subject = init.subject;
    this.issuer = init.issuer;
    this.commonName = init.commonName;
    this.dnsNames = init.dnsNames;
    this.notBefore = init.notBefore;
    this.notAfter = init.notAfter;
    this.trusted = init.trusted;
    this.issuerThumbprint = init.issuerThumbprint;
    this.issuerCertificateId = init.issuerCertificateId;
    this.revoked = init.revoked;
  }

  /** A transport's certificate description (or an existing model); anything else is no certificate. */
  static from(value: unknown): CertificateModel | null {
    if (value instanceof CertificateModel) return value;
    if (
      value &&
      typeof value === 'object' &&
      typeof (value as { thumbprint?: unknown }).thumbprint === 'string'
    ) {
      return new CertificateModel(value as CertificateModel);
    }
    return null;
  }
}

/** context.Response, and also the IResponse that send-request stores in a variable. */
export class ResponseModel {
  statusCode: number;
  statusReason: string;
  headers: HeaderCollection;
  body: MessageBody | null;

  constructor(
    init: {
      statusCode?: number;
      statusReason?: string;
      headers?: HeaderCollection;
      body?: MessageBody | Buffer | string | null;
    } = {},
  ) {
    this.statusCode = init.statusCode ?? 200;
    this.statusReason = init.statusReason ?? 'OK';
    this.headers = init.headers ?? new HeaderCollection();
    this.body = toBody(init.body);
  }
}

function toBody(body: MessageBody | Buffer | string | null | undefined): MessageBody | null {
  if (body === undefined || body === null) return null;
  return body instanceof MessageBody ? body : new MessageBody(body);
}

/**
 * context.Variables (IReadOnlyDictionary<string, object> to expressions). Values are runtime values as expressions
 * produce them (string, number for int, bigint for long, CsDouble, JObject, ResponseModel, …); use
 * `toDotNetString` to render one as text.
 */
export class VariablesModel {
  readonly #map = new Map<string, unknown>();
  get size(): number {
    return this.#map.size;
  }
  has(name: string): boolean {
    return this.#map.has(name);
  }
  get(name: string): unknown {
    return this.#map.get(name);
  }
  set(name: string, value: unknown): void {
    this.#map.set(name, value === undefined ? null : value);
  }
  delete(name: string): boolean {
    return this.#map.delete(name);
  }
  entries(): IterableIterator<[string, unknown]> {
    return this.#map.entries();
  }
}

/** context.LastError — filled by the runner when a policy fails, read in on-error. */
export class LastErrorInfo {
  source = '';
  reason = '';
  message = '';
  scope = '';
  section = '';
  path = '';
  policyId = '';
  constructor(init: Partial<Omit<LastErrorInfo, never>> = {}) {
    Object.assign(this, init);
  }
}

export class GroupInfo {
  constructor(
    readonly id: string,
    readonly name: string,
  ) {}
}

export class ApiInfo {
  id = '';
  name = '';
  path = '';
  revision = '1';
  version = '';
  isCurrentRevision = true;
  serviceUrl: UrlModel | null = null;
  protocols: string[] = ['https'];
  subscriptionKeyHeader = 'Ocp-Apim-Subscription-Key';
  subscriptionKeyQuery = 'subscription-key';
  constructor(init: Partial<ApiInfo> = {}) {
    Object.assign(this, init);
  }
}

export class OperationInfo {
  id = '';
  method = '';
  name = '';
  urlTemplate = '';
  constructor(init: Partial<OperationInfo> = {}) {
    Object.assign(this, init);
  }
}

export class ProductInfo {
  id = '';
  name = '';
  approvalRequired = false;
  groups: GroupInfo[] = [];
  state: 'NotPublished' | 'Published' = 'Published';
  subscriptionLimit: number | null = null;
  subscriptionRequired = true;
  apis: ApiInfo[] = [];
  constructor(init: Partial<ProductInfo> = {}) {
    Object.assign(this, init);
  }
}

export class SubscriptionInfo {
  id = '';
  name = '';
  key = '';
  primaryKey = '';
  secondaryKey = '';
  createdDate: Date = new Date(0);
  startDate: Date | null = null;
  endDate: Date | null = null;
  constructor(init: Partial<SubscriptionInfo> = {}) {
    Object.assign(this, init);
  }
}

export class UserInfo {
  id = '';
  email = '';
  firstName = '';
  lastName = '';
  note = '';
  registrationDate: Date = new Date(0);
  groups: GroupInfo[] = [];
  identities: { id: string; provider: string }[] = [];
  constructor(init: Partial<UserInfo> = {}) {
    Object.assign(this, init);
  }
}

export class DeploymentInfo {
  region = 'local';
  serviceName = 'portcullis';
  serviceId = '';
  gatewayId = 'managed';
  gatewayInstanceId = '';
  gatewayIsManaged = false;
  constructor(init: Partial<DeploymentInfo> = {}) {
    Object.assign(this, init);
  }
}

export interface PolicyContextInit {
  request: RequestModel;
  response?: ResponseModel | null;
  variables?: VariablesModel;
  api?: ApiInfo;
  operation?: OperationInfo;
  product?: ProductInfo | null;
  subscription?: SubscriptionInfo | null;
  user?: UserInfo | null;
  deployment?: DeploymentInfo;
  requestId?: string;
  /** When the request was received; Elapsed is measured from here. */
  timestamp?: Date;
  tracing?: boolean;
  /** Receives context.Trace(message) calls. */
  onTrace?: (message: string) => void;
  /** Clock for Elapsed/Now, injectable for tests. */
  now?: () => number;
}

/** One request's `context`. */
export class PolicyContext {
  request: RequestModel;
  /** Null in inbound until the backend answered (or return-response/on-error set one). */
  response: ResponseModel | null;
  readonly variables: VariablesModel;
  lastError: LastErrorInfo | null = null;
  api: ApiInfo;
  operation: OperationInfo;
  product: ProductInfo | null;
  subscription: SubscriptionInfo | null;
  user: UserInfo | null;
  deployment: DeploymentInfo;
  readonly requestId: CsGuid;
  readonly timestamp: Date;
  tracing: boolean;
  readonly onTrace: (message: string) => void;
  readonly now: () => number;

  constructor(init: PolicyContextInit) {
    this.request = init.request;
    this.response = init.response ?? null;
    this.variables = init.variables ?? new VariablesModel();
    this.api = init.api ?? new ApiInfo();
    this.operation = init.operation ?? new OperationInfo();
    this.product = init.product ?? null;
    this.subscription = init.subscription ?? null;
    this.user = init.user ?? null;
    this.deployment = init.deployment ?? new DeploymentInfo();
    this.requestId = new CsGuid((init.requestId ?? crypto.randomUUID()).toLowerCase());
    this.timestamp = init.timestamp ?? new Date();
    this.tracing = init.tracing ?? false;
    this.onTrace = init.onTrace ?? (() => {});
    this.now = init.now ?? Date.now;
  }

  get timestampValue(): CsDateTime {
    return CsDateTime.fromDate(this.timestamp, 'Utc');
  }
  get elapsed(): CsTimeSpan {
    return CsTimeSpan.fromMs(this.now() - this.timestamp.getTime());
  }
}
