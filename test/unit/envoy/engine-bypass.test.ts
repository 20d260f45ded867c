import { describe, expect, it } from 'vitest';
import { normalizeRequestPath } from '../../../src/catalog/request-path.js';
import { compileUrlTemplate } from '../../../src/catalog/url-template.js';
import { parseConfig } from '../../../src/config/load.js';
import { engineBypass, planRuntime } from '../../../src/config/plan.js';
import { buildBootstrap } from '../../../src/envoy/bootstrap/bootstrap.js';
import { bypassMatches, templatePattern } from '../../../src/envoy/bootstrap/engine-bypass.js';

/** RE2 and JavaScript agree on the constructs templatePattern writes; Envoy's safe_regex matches whole values. */
const fullMatch = (regex: string, text: string) => new RegExp(`^(?:${regex})$`).test(text);

const templates = [
  '/',
  '/api/Course',
  '/api/Course/{id}',
  '/api/Course/{id}/',
  '/files/{*path}',
  '/{*all}',
  '/v{version}.json',
  '/search?q={q}',
  '/a/{x}/b/{y}?p={p}&r={r}',
];

const paths = [
  '/',
  '/api/Course',
  '/api/course',
  '/API/COURSE/',
  '/api/Course/12',
  '/api/Course/12/',
  '/api/Course/12/x',
  '/api/Course/a%2Fb',
  '/api/Course/',
  '/api/Coursex',
  '/files',
  '/files/',
  '/files/a/b/c.txt',
  '/filesx',
  '/v1.json',
  '/v.json',
  '/V1.JSON',
  '/search',
  '/a/1/b/2',
  '/a/1/B/2/',
  "/a/!$&'()*+,=:@-~._/b/x",
  '/a/x;y/b/z',
  '/api/Course/%41',
  '/api/Course/..',
  '/api/Course/.',
  '/api/Course/...',
  '/api/Course/..x',
  '/files/../api/Course/1',
  '/files/a/./b',
  '/v..json',
  '/a/../b/x',
];

describe('templatePattern: a route that skips the engine matches only what the engine matches', () => {
  it('agrees with the catalog on every path it accepts, and accepts the plain ones', () => {
    const disagreements: string[] = [];
    for (const template of templates) {
      const pattern = templatePattern(template)!;
      expect(pattern, template).toBeDefined();
      const compiled = compileUrlTemplate(template);
      for (const path of paths) {
        const query = new URLSearchParams(pattern.queryNames.map((name): [string, string] => [name, 'v']));
        const normalized = normalizeRequestPath(path);
        const engine = normalized.ok && compiled.match(normalized.path, query) !== undefined;
        const envoy = fullMatch(pattern.path, path);
        // The route may leave a path the engine matches to the engine (an escape, `;`), never the reverse; and what
        // it takes, the engine forwards as it is (even from an Envoy that did not resolve dot-segments).
        if (envoy && !(engine && normalized.path === path)) disagreements.push(`${template} ${path}`);
        const plain = !/[%;]/.test(path) && normalized.ok && normalized.path === path;
        if (plain && engine && !envoy) disagreements.push(`${template} ${path} (plain, not matched)`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('leaves to the engine a template whose literal part the raw path cannot show', () => {
    expect(templatePattern('/a b/{id}')).toBeUndefined();
    expect(templatePattern('/x;y')).toBeUndefined();
    expect(templatePattern('/a%20b')).toBeUndefined();
    expect(templatePattern('/a/..')).toBeUndefined();
    expect(templatePattern('/.{x}.')).toBeUndefined();
  });

  it('matches the whole :path, query included, one route per method and required query parameters', () => {
    const matches = bypassMatches('v1/courses', {
      operations: [
        { method: 'GET', urlTemplate: '/api/Course' },
        { method: 'get', urlTemplate: '/api/Course/{id}' },
        { method: 'GET', urlTemplate: '/search?q={q}' },
        { method: 'POST', urlTemplate: '/api/Course' },
      ],
      subscriptionKey: { header: 'Ocp-Apim-Subscription-Key', query: 'subscription-key' },
    });
    expect(matches).toHaveLength(3);
    const get = matches[0]!;
    expect(get.path_separated_prefix).toBe('/v1/courses');
    const regex = get.headers!.find((header) => header.name === ':path')!.string_match!.safe_regex!.regex;
    expect(fullMatch(regex, '/v1/courses/api/Course/7?a=1&b=')).toBe(true);
    // Characters the engine would decode or re-encode in the query, and the API root itself, go to the engine.
    expect(fullMatch(regex, '/v1/courses/api/Course/7?a=x+y')).toBe(false);
    expect(fullMatch(regex, '/v1/courses/api/Course/7?a=%41')).toBe(false);
    expect(fullMatch(regex, '/v1/courses/api/Course/7?flag')).toBe(false);
    expect(fullMatch(regex, '/v1/courses')).toBe(false);
    expect(get.headers).toEqual(
      expect.arrayContaining([
        { name: ':method', string_match: { exact: 'GET' } },
        { name: 'ocp-apim-subscription-key', present_match: false },
        { name: 'x-portcullis-trace', present_match: false },
      ]),
    );
    expect(get.query_parameters).toEqual([{ name: 'subscription-key', present_match: false }]);
    expect(matches[1]!.query_parameters).toEqual([
      { name: 'subscription-key', present_match: false },
      { name: 'q', present_match: true },
    ]);
  });
});

describe('engineBypass: which APIs skip the engine', () => {
  const gateway = (extra: string) =>
    parseConfig(
      `
apis:
  - id: plain
    urlSuffix: plain
    serviceUrl: http://127.0.0.1:9000
    operations: [{ method: GET, urlTemplate: /items }]
${extra}
`,
      'gateway.yaml',
    );
  const bypassed = (extra: string) => {
    const config = gateway(extra);
    return engineBypass(config, config.apis[0]!) !== undefined;
  };

  it('an API with no policy at any scope and no subscription needed', () => {
    expect(bypassed('')).toBe(true);
    expect(bypassed('products: [{ id: open, apis: [plain], subscriptionRequired: false }]')).toBe(true);
  });

  it('not with a policy at any scope', () => {
    const policy = '"<policies><inbound><base /></inbound></policies>"';
    expect(bypassed(`policy: ${policy}`)).toBe(false);
    expect(
      bypassed(`products: [{ id: p, apis: [plain], subscriptionRequired: false, policy: ${policy} }]`),
    ).toBe(false);
    const config = gateway('');
    const api = config.apis[0]!;
    expect(engineBypass(config, { ...api, policy })).toBeUndefined();
    expect(engineBypass(config, { ...api, operations: [{ ...api.operations[0]!, policy }] })).toBeUndefined();
  });

  it('not when a call without a key is refused, for a SOAP API, or without operations', () => {
    const config = gateway('');
    const api = config.apis[0]!;
    expect(engineBypass(config, { ...api, subscriptionRequired: true })).toBeUndefined();
    expect(engineBypass(config, { ...api, type: 'soap' })).toBeUndefined();
    expect(engineBypass(config, { ...api, operations: [] })).toBeUndefined();
  });
});

describe('versions that share a URL suffix (header and query versioning)', () => {
  const config = parseConfig(
    `
versionSets:
  - { id: orders, scheme: header, header: Api-Version }
  - { id: stock, scheme: path }
apis:
  - id: orders
    urlSuffix: orders
    serviceUrl: http://127.0.0.1:9001
    version: { set: orders, name: "" }
    operations: [{ method: GET, urlTemplate: /items }]
  - id: orders-v2
    urlSuffix: orders
    serviceUrl: http://127.0.0.1:9002
    version: { set: orders, name: v2 }
    operations: [{ method: GET, urlTemplate: /items }]
  - id: stock-v1
    urlSuffix: stock/v1
    serviceUrl: http://127.0.0.1:9003
    version: { set: stock, name: v1 }
    operations: [{ method: GET, urlTemplate: /items }]
`,
    'gateway.yaml',
  );

  it('never skip the engine, which alone reads the version; path versions still may', () => {
    expect(config.apis.map((api) => engineBypass(config, api) !== undefined)).toEqual([false, false, true]);
  });

  it('get one route for their suffix, through the engine', async () => {
    const bootstrap = buildBootstrap(await planRuntime(config, { directory: '/etc/portcullis' }));
    const routes = (routeNames(bootstrap) ?? []).filter((name) => name.startsWith('api_'));
    expect(routes).toEqual(['api_stock-v1_bypass_0', 'api_stock-v1', 'api_orders']);
  });
});

/** The route names of the first virtual host of the bootstrap. */
function routeNames(value: unknown): string[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if ('virtual_hosts' in value) {
    const [host] = value.virtual_hosts as { routes: { name: string }[] }[];
    return host!.routes.map((route) => route.name);
  }
  for (const child of Object.values(value)) {
    const found = routeNames(child);
    if (found) return found;
  }
  return undefined;
}
