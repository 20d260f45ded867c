import type { HeaderMatcher, HeaderValueOption, PerFilterConfig, RouteMatch } from '../config-types.js';
import { internalHeaderPrefix, traceRequestHeader } from '../contract.js';

/**
 * Routes that skip ext_proc for an API the engine would only pass through: no policy at any scope (global, product,
 * API, operation) and no subscription needed for a call without a key. For such an API the engine's whole work on
 * a request that matches an operation is to strip internal headers, add a request id and forward the request as it
 * came; Envoy does that itself on these routes and the request never crosses the gRPC stream.
 *
 * A route here matches only requests the engine would forward byte for byte: an operation's method and URL template
 * (catalog/url-template.ts), a path and query made of characters that need no decoding or re-encoding, no
 * subscription key (the engine checks a key even where none is needed) and no debug-trace header. Anything else —
 * an unknown operation (404), an unusual path, a key, a traced request — falls through to the API's own route, where
 * the engine answers as before.
 */
export interface EngineBypass {
  /** Every operation of the API: a request matching none of them gets the engine's 404. */
  readonly operations: readonly { readonly method: string; readonly urlTemplate: string }[];
  /** Where a subscription key travels (the API's header and query parameter names). */
  readonly subscriptionKey: { readonly header: string; readonly query: string };
}

/**
 * Path characters the engine forwards unchanged: RFC 3986 `pchar` without `%` (the engine decodes escapes) and `;`
 * (it refuses `..;`). `encodeURI` leaves each of them as it is.
 */
const pathCharacter = "[A-Za-z0-9._~!$&'()*+,=:@-]";
const notDot = "[A-Za-z0-9_~!$&'()*+,=:@-]";
/**
 * A non-empty segment other than `.` and `..` (RE2 has no lookahead): Envoy resolves dot-segments before routing,
 * and should one reach a route all the same, the engine is the one to resolve or refuse it.
 */
const segment = `(?:${notDot}${pathCharacter}*|\\.${notDot}${pathCharacter}*|\\.\\.${pathCharacter}+)`;
/**
 * Query characters the engine forwards unchanged: it rebuilds the query with `encodeURIComponent`, which leaves
 * exactly these; `+` (a space to it) and `%` are left out.
 */
const queryCharacter = "[A-Za-z0-9._~!*'()-]";
const queryPair = `${queryCharacter}+=${queryCharacter}*`;
const query = `(?:\\?${queryPair}(?:&${queryPair})*)?`;

/**
 * The route matches of an API's bypass, one per method and set of required query parameters (operations that share
 * both share one regex). Operations whose template a regex cannot follow exactly are left to the engine.
 */
export function bypassMatches(urlSuffix: string, bypass: EngineBypass): RouteMatch[] {
  const groups = new Map<string, { method: string; queryNames: string[]; paths: string[] }>();
  for (const operation of bypass.operations) {
    const pattern = templatePattern(operation.urlTemplate);
    if (!pattern) continue;
    const method = operation.method.toUpperCase();
    const queryNames = [...pattern.queryNames].sort();
    const key = `${method} ${queryNames.join('&')}`;
    const group = groups.get(key) ?? { method, queryNames, paths: [] };
    group.paths.push(pattern.path);
    groups.set(key, group);
  }
  const excluded: HeaderMatcher[] = [
    { name: bypass.subscriptionKey.header.toLowerCase(), present_match: false },
    { name: traceRequestHeader, present_match: false },
  ];
  return [...groups.values()].map((group) => ({
    path_separated_prefix: `/${urlSuffix}`,
    headers: [
      { name: ':method', string_match: { exact: group.method } },
      {
        name: ':path',
        string_match: {
          safe_regex: { regex: `/${regexLiteral(urlSuffix)}(?:${group.paths.join('|')})${query}` },
        },
      },
      ...excluded,
    ],
    query_parameters: [
      { name: bypass.subscriptionKey.query, present_match: false },
      ...group.queryNames.map((name) => ({ name, present_match: true })),
    ],
  }));
}

/** What the engine would have done to the request: a request id when the client sent none, internal headers gone. */
export const bypassRequestHeaders: readonly HeaderValueOption[] = [
  { header: { key: 'x-request-id', value: '%UNIQUE_ID%' }, append_action: 'ADD_IF_ABSENT' },
];

export const bypassFilterConfig: PerFilterConfig = {
  'envoy.filters.http.ext_proc': {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute',
    disabled: true,
  },
  'envoy.filters.http.header_mutation': {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutationPerRoute',
    mutations: {
      request_mutations: [{ remove_on_match: { key_matcher: { prefix: internalHeaderPrefix } } }],
    },
  },
};

/**
 * An RE2 pattern for the API-relative paths (from the `/` after the suffix) a URL template matches, following
 * catalog/url-template.ts: literal segments case-insensitively, a parameter as at least one character between its
 * literal prefix and suffix, a final `{*name}` as the rest of the path (possibly empty), one optional trailing
 * slash. Undefined when a literal part holds a character outside `pathCharacter`: the engine compares decoded
 * segments, which a regex on the raw path cannot follow.
 */
export function templatePattern(urlTemplate: string): { path: string; queryNames: string[] } | undefined {
  const queryStart = urlTemplate.indexOf('?');
  const pathPart = queryStart < 0 ? urlTemplate : urlTemplate.slice(0, queryStart);
  const queryPart = queryStart < 0 ? '' : urlTemplate.slice(queryStart + 1);
  const queryNames: string[] = [];
  for (const pair of queryPart ? queryPart.split('&') : []) {
    const key = /^([^=]+)=\{[A-Za-z_][A-Za-z0-9_-]*\}$/.exec(pair)?.[1];
    if (key === undefined || !isPlain(key, queryCharacter)) return undefined;
    queryNames.push(key);
  }
  const segments = pathPart.split('/').slice(1);
  let path = '';
  for (const [index, raw] of segments.entries()) {
    if (/^\{\*[A-Za-z_][A-Za-z0-9_-]*\}$/.test(raw)) {
      if (index !== segments.length - 1) return undefined;
      // The rest of the path, slashes included; at the API's root it still starts with the slash after the suffix.
      const rest = `(?:/${segment}?)${index === 0 ? '+' : '*'}`;
      return { path: path + rest, queryNames };
    }
    const parameter = /^([^{}]*)\{[A-Za-z_][A-Za-z0-9_-]*\}([^{}]*)$/.exec(raw);
    if (parameter) {
      const [, prefix = '', suffix = ''] = parameter;
      if (!isPlain(prefix, pathCharacter) || !isPlain(suffix, pathCharacter)) return undefined;
      // A prefix and suffix of dots alone could frame a dot-segment.
      if (/^\.*$/.test(prefix + suffix) && prefix + suffix !== '') return undefined;
      const value = prefix + suffix === '' ? segment : `${pathCharacter}+`;
      path += `/${regexLiteral(prefix)}${value}${regexLiteral(suffix)}`;
      continue;
    }
    if (/[{}]/.test(raw) || !isPlain(raw, pathCharacter) || raw === '.' || raw === '..') return undefined;
    path += `/${caseInsensitive(raw)}`;
  }
  return { path: `${path}/?`, queryNames };
}

function isPlain(text: string, characterClass: string): boolean {
  return new RegExp(`^${characterClass}*$`).test(text);
}

function regexLiteral(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `[cC][oO]…`: ASCII letters only (RE2's `(?i)` also folds `k` with the Kelvin sign, which no path may hold). */
function caseInsensitive(text: string): string {
  return [...text]
    .map((character) => {
      const lower = character.toLowerCase();
      const upper = character.toUpperCase();
      return lower !== upper ? `[${lower}${upper}]` : regexLiteral(character);
    })
    .join('');
}
