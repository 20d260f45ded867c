/**
 * What does not behave as on API Management, and why: one row per difference, the only place they are listed.
 * docs/differences.md is generated from this table (`portcullis differences`), and a test keeps the two equal.
 *
 * To add a difference: append a row to DIFFERENCES (keep rows of one area together), then regenerate the page with
 * `portcullis differences > docs/differences.md`. Say what API Management does (with the page or public evidence
 * that shows it), what Portcullis does instead, and why in one of the BECAUSE kinds.
 */

/** Why Portcullis cannot or will not do what API Management does. */
export const BECAUSE = {
  envoy: 'an Envoy limit',
  security: 'a security choice',
  runtime: 'the runtime underneath (JavaScript, not .NET)',
  configuration: 'a default of the gateway configuration',
} as const;

export type Because = keyof typeof BECAUSE;

export interface Difference {
  /** Where the difference shows: a policy element, an expression type, a built-in step. */
  readonly area: string;
  /** The policy elements it concerns: the policy reference repeats the difference under each. */
  readonly elements?: readonly string[];
  /** What API Management does, with its source. */
  readonly apiManagement: string;
  /** What Portcullis does instead. */
  readonly portcullis: string;
  readonly because: Because;
  /** The reason in a sentence: the limit or the risk. */
  readonly why: string;
}

const REGEX_WHY =
  'Regex runs on re2js, a linear-time engine, so no pattern a policy or a client sends can keep the engine busy ' +
  '(a backtracking engine took minutes on 60 characters of `a*a*a*a*a*a*a*b`).';

export const DIFFERENCES: readonly Difference[] = [
  {
    area: 'Expressions: `Regex`',
    apiManagement: '.NET regular expressions: `$` and `\\Z` also match before a final newline.',
    portcullis:
      '`$` and `\\Z` match only at the very end of the input, unless `RegexOptions.Multiline` is set.',
    because: 'security',
    why: REGEX_WHY,
  },
  {
    area: 'Expressions: `Regex`',
    apiManagement: '.NET regular expressions: `\\b` uses Unicode word characters.',
    portcullis: '`\\b` uses ASCII word characters.',
    because: 'security',
    why: REGEX_WHY,
  },
  {
    area: 'Expressions: `Regex`',
    apiManagement:
      '.NET regular expressions accept backreferences, lookahead and lookbehind, atomic groups, possessive ' +
      'quantifiers, conditionals, balancing groups, `\\G`, `RegexOptions.RightToLeft`, class subtraction and ' +
      '`\\p{IsX}` blocks.',
    portcullis:
      'These constructs are refused: in a literal pattern when the policy loads (`file:line:col`), in a pattern ' +
      'built at run time with an `ArgumentException` in `context.LastError`.',
    because: 'security',
    why: `${REGEX_WHY} These constructs need backtracking.`,
  },
  {
    area: 'Expressions: `Regex`',
    apiManagement:
      '.NET records every repetition of a quantified group: `Regex.Match("abc", @"(\\w)+").Groups[1].Captures` ' +
      'holds `a`, `b` and `c` (Group.Captures, .NET API reference).',
    portcullis: '`Group.Captures` holds the last capture only (`c`); `Group.Value` is the same as in .NET.',
    because: 'security',
    why: `${REGEX_WHY} RE2 keeps one span per group, the last.`,
  },
  {
    area: '`set-status`',
    elements: ['set-status'],
    apiManagement: "The `reason` is the status line's reason phrase (set-status policy page).",
    portcullis:
      '`reason` is not on the status line the client receives: Envoy writes its own phrase for the code over ' +
      'HTTP/1.1 (`418 Unknown`, `200 OK`). Policies still read the reason they set from ' +
      '`context.Response.StatusReason`.',
    because: 'envoy',
    why:
      "Envoy does not carry a custom reason phrase (envoyproxy/envoy#9559), ext_proc's immediate responses and " +
      'header mutations carry only the code, and HTTP/2 has no reason phrase at all.',
  },
  {
    area: '`mock-response`',
    elements: ['mock-response'],
    apiManagement: 'The mocked response carries the `Content-Type` of the chosen media type.',
    portcullis:
      'A mocked response without content (the operation declares no example or schema for it) has no ' +
      '`Content-Type`; with content, the header is sent.',
    because: 'envoy',
    why: "Envoy removes that header from every answer it sends on the engine's behalf whose body is empty.",
  },
  {
    area: '`validate-jwt`, `validate-azure-ad-token`',
    elements: ['validate-jwt', 'validate-azure-ad-token'],
    apiManagement:
      '`context.LastError.Message` of signature, audience, issuer, lifetime and format failures is ' +
      '`<message from jwt library>. Access denied.` ("Error handling in API Management policies", predefined ' +
      "errors): the text of .NET's token handler.",
    portcullis:
      "The Reason is the documented one; the Message is Portcullis's own sentence (e.g. `JWT has expired.`). " +
      'The claim failures (`TokenClaimNotFound`, `TokenClaimValueNotAllowed`) use the documented texts.',
    because: 'runtime',
    why: "tokens are checked with jose, not .NET's IdentityModel, whose messages cannot be reproduced faithfully.",
  },
  {
    area: '`validate-parameters`',
    elements: ['validate-parameters'],
    apiManagement:
      "Every request header the API definition does not declare is unspecified (the page's example overrides " +
      '`Host`, `User-Agent` and `Referrer` to `ignore`).',
    portcullis:
      'The headers Envoy adds on the way to the engine (`x-envoy-*`, `x-forwarded-for`, `x-forwarded-proto`, ' +
      '`x-request-id`) are never unspecified; every header the client sent is.',
    because: 'envoy',
    why: 'the client did not send them, and Envoy adds them to every request.',
  },
  {
    area: '`validate-headers`',
    elements: ['validate-headers'],
    apiManagement: 'Every response header the definition does not declare for the status is unspecified.',
    portcullis:
      "The transport's headers (`Content-Type`, `Content-Length`, `Transfer-Encoding`, `Connection`, `Date`, " +
      '`Server`, `Keep-Alive`, `x-envoy-*`) are never unspecified.',
    because: 'envoy',
    why:
      'Envoy writes them on the way back whatever the backend sent, and OpenAPI says a declared `Content-Type` ' +
      'response header is ignored.',
  },
  {
    area: '`validate-content`, `validate-parameters`, `validate-headers`',
    elements: ['validate-content', 'validate-parameters', 'validate-headers'],
    apiManagement:
      "An error's Details end with the JSON schema validator's message and the place in the body " +
      '(`{valError.Message} Line: {LineNumber}, Position: {LinePosition}`, Json.NET Schema).',
    portcullis:
      "The documented sentence, then Ajv's message for the first failure (`Property /age must be integer.`) and " +
      "the line and column where the failing value starts (`Line: 0, Position: 0` for a parameter's value). `format` " +
      "is checked as ajv-formats defines each format (JSON Schema's and OpenAPI's: `date-time`, `email`, `uri`, " +
      '`uuid`, `ipv4`, `int32`, …); a format it does not know is ignored.',
    because: 'runtime',
    why: 'schemas are checked with Ajv (JSON Schema 2020-12), not Json.NET Schema, whose messages cannot be reproduced faithfully.',
  },
  {
    area: '`validate-content` with XML and SOAP',
    elements: ['validate-content'],
    apiManagement:
      "An XML body's errors end with .NET's XmlSchemaValidationException message and its line and position; a schema " +
      'of the registry may include another by `/schemas/<id>`.',
    portcullis:
      "The documented sentence, then libxml2's message for the first failure (`Element '{urn:orders}id': 'x' is not a " +
      "valid value of the atomic type 'xs:int'.`) and its line; libxml2 reports no column for schema errors " +
      "(`Position: 0`). A schema may include or import only the registry's XML schemas (`/schemas/<id>`) and, for an " +
      "API's WSDL, the schemas of its `types`; a body or schema with a DOCTYPE is refused (ValidationException, or a " +
      'load error). `validate-as="soap"` accepts a SOAP 1.1 or 1.2 envelope whatever the content type.',
    because: 'runtime',
    why:
      'XML schemas are checked with libxml2 (WebAssembly), not System.Xml, whose messages cannot be reproduced; ' +
      'nothing outside the configuration is loaded while validating (no external entities, no schema from a URL).',
  },
  {
    area: '`set-header` with several values',
    elements: ['set-header'],
    apiManagement:
      'Several values are joined into one comma-separated line, except for headers whose values may hold commas or ' +
      'dates (`User-Agent`, `WWW-Authenticate`, `Proxy-Authenticate`, `Cookie`, `Set-Cookie`, `Warning`, `Date`, ' +
      '`Expires`, `If-Modified-Since`, `If-Unmodified-Since`, `Last-Modified`, `Retry-After`), sent as one line ' +
      'per value (set-header page, "Usage notes").',
    portcullis:
      'The same, and a header the client repeated reaches the backend as one comma-joined line too; but a ' +
      "request's `User-Agent`, `If-Modified-Since` and `If-Unmodified-Since` and a response's `Date`, `Expires` " +
      'and `Last-Modified` are sent as one comma-joined line.',
    because: 'envoy',
    why:
      'Envoy keeps those headers as one entry of its header map and joins every value appended to one with a ' +
      'comma; an external processor cannot make it send two lines.',
  },
  {
    area: 'Expressions: `decimal` in JSON',
    apiManagement:
      'Newtonsoft keeps a `decimal` in a JValue with its digits: `new JObject { ["p"] = 1.50m }` writes `1.50`.',
    portcullis:
      '`decimal` itself is exact (28–29 digits, scale kept), but a JSON token built from one holds a double: `1.50m` ' +
      'is written `1.5`, and digits past the 15th–17th are lost there.',
    because: 'runtime',
    why: 'JSON tokens hold JavaScript numbers; carrying a decimal through the JSON writer is not done yet.',
  },
  {
    area: 'Expressions: `TimeZoneInfo`',
    apiManagement:
      "API Management's hosts run Windows: zone names are Windows' own (`DisplayName` \"(UTC-08:00) Pacific Time (US & " +
      'Canada)"), and `GetSystemTimeZones` lists Windows ids (TimeZoneInfo, .NET API reference).',
    portcullis:
      'Offsets and daylight-time rules are the same (IANA data), and Windows ids are accepted, but names come from ' +
      'ICU (`DisplayName` "(UTC-08:00) Pacific Time") and `GetSystemTimeZones` lists IANA ids.',
    because: 'runtime',
    why: "Node's time-zone database is ICU's, with IANA ids and CLDR names; Windows' own names are not part of it.",
  },
  {
    area: 'Expressions: `X509Certificate2`, `X509Certificate`',
    apiManagement:
      '`new X509Certificate2(bytes, password)` reads a PKCS#12 (.pfx) file with its private key, and `Export` writes ' +
      'PFX, PKCS#7 and the Windows serialized forms (learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.x509certificate.export).',
    portcullis:
      'A certificate is read from DER or PEM only; a password is a CryptographicException naming PKCS#12, and ' +
      '`Export` writes `X509ContentType.Cert` only (other types are a NotSupportedException).',
    because: 'runtime',
    why: "Node's crypto has no PKCS#12 or PKCS#7 reader or writer, and the serialized forms are Windows certificate-store blobs.",
  },
  {
    area: 'Expressions: `X509Certificate2.GetNameInfo`',
    apiManagement:
      '`GetNameInfo(type, forIssuer: true)` reads the issuer alternative name extension before the issuer name ' +
      '(dotnet/runtime CertificateData.GetNameInfo).',
    portcullis:
      "With forIssuer true only the issuer's name is read; the subject's alternative names are read as .NET does.",
    because: 'runtime',
    why: "Node's X509Certificate exposes the subject alternative names, not the issuer alternative name extension.",
  },
  {
    area: 'Expressions: `RSA`',
    apiManagement:
      '`RSA.Create(bits)` generates a key of any legal size, up to 16384 bits, when the key is first used.',
    portcullis:
      'A key generated in an expression is at most 4096 bits (larger is ExpressionLimitExceeded); imported keys may be ' +
      'up to 16384 bits.',
    because: 'security',
    why: 'generating a larger key takes seconds of one core per call, which an expression could repeat on every request.',
  },
  {
    area: 'Expressions: `IPAddress`',
    apiManagement:
      '`IPAddress.Parse("fe80::1%eth0")` looks the scope name up among the machine\'s network interfaces and keeps its index as `ScopeId`.',
    portcullis:
      'A numeric scope is kept; a scope name counts as no scope, as .NET does for a name it does not find.',
    because: 'security',
    why: "the gateway's network interfaces are not something a request or a policy should learn about.",
  },
  {
    area: '`xsl-transform`',
    elements: ['xsl-transform'],
    apiManagement:
      'The stylesheet "follows the standard XSLT specification" (xsl-transform policy page), run by .NET, with ' +
      'its output formatting; the page does not say what `xsl:include`, `xsl:import` or `document()` may load.',
    portcullis:
      'XSLT 1.0 by xslt-processor: the result is the same tree, but indentation and empty elements may be written ' +
      'differently (`<c></c>` for `<c/>`). `xsl:include` and `xsl:import` are refused at load, `document()` is an ' +
      'empty node-set, a body with a DOCTYPE is refused, and `xsl:message` is not logged. A failed ' +
      'transformation is `LastError.Reason` `XslTransformFailed` (status 500).',
    because: 'security',
    why:
      'A stylesheet reaches nothing outside the policy (no files, URLs or entities), and a request body cannot ' +
      'write to the gateway log; .NET itself is not available to run the transformation.',
  },
  {
    area: '`set-body` Liquid',
    elements: ['set-body'],
    apiManagement:
      'An XML body binds to `body` when Content-Type is application/xml, text/xml or +xml (set-body page); the ' +
      "page does not say what shape it gets. DotLiquid's `Currency` formats in the gateway's culture.",
    portcullis:
      'An XML body is bound by local names (prefixes dropped): an element with no child elements or attributes ' +
      'is its text, repeated elements are an array, attributes are keys, other text is `#text`, `xsi:nil` follows ' +
      '`xsi-nil`; a body with a DOCTYPE is not bound. `Currency` formats in the invariant culture (`¤1,234.50`).',
    because: 'runtime',
    why:
      "API Management's mapping of XML to Liquid data is not documented and DotLiquid is not available here; " +
      'Portcullis formats in the invariant culture everywhere, so output does not depend on the host.',
  },
  {
    area: '`authentication-certificate`',
    elements: ['authentication-certificate'],
    apiManagement:
      'Presents a client certificate to the backend: a certificate of the instance by `thumbprint` or ' +
      '`certificate-id`, or a PKCS#12 `body` with its `password` computed by an expression, chosen per request ' +
      '(authentication-certificate policy page).',
    portcullis:
      'In inbound, the backend presents the certificate its configuration names (tls.backends); the element checks ' +
      'that it is the one the policy names (else BackendCertificateNotConfigured, 500), and `body` and `password` ' +
      'are refused at load. Inside send-request and send-one-way-request, whose requests the engine sends, all ' +
      'four attributes work as documented.',
    because: 'envoy',
    why:
      "Envoy makes the TLS connection to the backend: its client certificate is part of the backend's cluster, " +
      'fixed when the gateway starts, not chosen per request by a policy.',
  },
  {
    area: '`authentication-certificate` in send-request',
    elements: ['send-request', 'send-one-way-request'],
    apiManagement:
      'A `body` is any PKCS#12 blob .NET reads (X509Certificate2), including the RC2-encrypted ones older tools ' +
      'and Windows exports write; what happens when the certificate cannot be used is not documented.',
    portcullis:
      'A `body` encrypted with RC2 (`openssl pkcs12 -legacy`, OpenSSL 1.x) cannot be opened: like a wrong ' +
      '`password`, it fails the call before connecting (send-request: on-error with LastError.Reason ' +
      '`CertificateInvalid`; send-one-way-request: a warning in the log); a ' +
      '`certificate-id` or `thumbprint` not in tls.certificates is `CertificateNotFound` (a literal `certificate-id` ' +
      'is refused at load). Re-export such a blob with AES (OpenSSL 3 `pkcs12 -export`).',
    because: 'runtime',
    why: "Node's TLS is OpenSSL 3 without its legacy provider, which holds RC2.",
  },
  {
    area: '`proxy`',
    elements: ['proxy', 'send-request'],
    apiManagement:
      'The `proxy` policy routes requests forwarded to backends through an HTTP proxy, with optional basic ' +
      'credentials; HTTP only between the gateway and the proxy (proxy policy page). It also applies as a child ' +
      'of send-request.',
    portcullis:
      '`<proxy>` inside send-request and send-one-way-request works as documented (an https target is tunnelled ' +
      'with CONNECT; a proxy that answers 407 fails the call like an unreachable host). The `proxy` element in ' +
      'inbound, for the forwarded request, is refused at load.',
    because: 'envoy',
    why:
      'Envoy, not the engine, sends the forwarded request, and its route cannot send one request through a ' +
      'forward proxy chosen by a policy; a proxy for all backend traffic belongs in the Envoy configuration.',
  },
  {
    area: 'Subscriptions: the key a request carries',
    apiManagement:
      'The subscription key header (`Ocp-Apim-Subscription-Key` unless the API names another) or query parameter ' +
      '(`subscription-key`) stays on the request: policies see it in `context.Request.Headers` or the URL, and by ' +
      'default it is passed to the backend (the subscriptions page says to remove it with set-header or ' +
      'set-query-parameter when that matters).',
    portcullis:
      'The key header and query parameter the API names are removed once the key is read: neither policies nor the ' +
      'backend see them, and the access log shows the query parameter as `***`. Expressions read the key that ' +
      'admitted the call as `context.Subscription.Key`.',
    because: 'security',
    why:
      'A subscription key is a credential of the gateway; a backend, its logs or a trace need not hold it, and a ' +
      'policy that must forward it can set it from `context.Subscription.Key`.',
  },
  {
    area: 'Subscriptions: an API of the gateway configuration',
    apiManagement:
      'An API requires a subscription key unless an open product contains it: a new API has ' +
      '`subscriptionRequired` true unless it is turned off.',
    portcullis:
      'An API written in the gateway configuration (`apis:` in YAML) requires no key unless it says ' +
      "`subscriptionRequired: true`. APIs imported from an APIOps extract keep API Management's default (true), " +
      'and the key names default to `Ocp-Apim-Subscription-Key` and `subscription-key` as there.',
    because: 'configuration',
    why:
      'A hand-written configuration should answer before any subscription exists; an API that must be ' +
      'protected says so.',
  },
];

/** The differences as Markdown (`portcullis differences`, docs/differences.md). */
export function differencesMarkdown(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const out = [
    '# Known differences from API Management',
    '',
    'Generated from `src/policy/differences.ts` by `portcullis differences`. Policy elements that are declared but',
    'not run are listed, with the reason, at the end of [the policy reference](policy-reference.md).',
    '',
    '| where | API Management | Portcullis | because |',
    '|---|---|---|---|',
    ...DIFFERENCES.map(
      (d) =>
        `| ${cell(d.area)} | ${cell(d.apiManagement)} | ${cell(d.portcullis)} | ${BECAUSE[d.because]}: ${cell(d.why)} |`,
    ),
  ];
  return `${out.join('\n')}\n`;
}
