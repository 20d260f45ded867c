import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';
import { formatDiagnostic } from '../../../src/diagnostic.js';

function problems(text: string): string[] {
  try {
    parseConfig(text, 'gateway.yaml');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatDiagnostic);
    throw error;
  }
  return [];
}

describe('gateway configuration', () => {
  it('never repeats a credential or a named value in an error, but still says where and what rule', () => {
    const text = [
      'subscriptions: [{ id: a, scope: all, primaryKey: short-key-1 }]',
      'namedValues: { api-key: 12345 }',
      'engine: { traceKey: tiny-trace }',
    ].join('\n');
    const error = (() => {
      try {
        parseConfig(text, 'g.yaml');
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.message).toContain('g.yaml:1:');
    expect(error.message).toContain('subscriptions[0].primaryKey: must be at least 16 characters');
    expect(error.message).toContain('namedValues.api-key');
    expect(error.message).toContain('engine.traceKey');
    for (const secret of ['short-key-1', '12345', 'tiny-trace']) expect(error.message).not.toContain(secret);
  });

  it('counts lengths in good English: at least 1 entry, not 1 entries', () => {
    expect(problems('engine: { ports: [] }')).toEqual([
      'gateway.yaml:1:11: engine.ports: must have at least 1 entry',
    ]);
  });

  it('refuses a YAML alias bomb, and an alias before its anchor, as configuration problems', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 9; level++) {
      const [previous, name] = [String.fromCharCode(96 + level), String.fromCharCode(97 + level)];
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    }
    expect(problems(levels.join('\n'))).toEqual([
      'gateway.yaml:1:1: aliases would expand past 100 nodes (a YAML alias bomb?)',
    ]);
    expect(problems('apis: *later\nx: &later []')[0]).toMatch(/^gateway\.yaml:1:1: Unresolved alias/);
  });

  it('fills defaults for an empty file', () => {
    const config = parseConfig('', 'gateway.yaml');
    expect(config.gateway.http).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(config.admin).toEqual({ host: '127.0.0.1', port: 9901 });
    expect(config.engine).toEqual({ host: '127.0.0.1', ports: [0], messageTimeoutMs: 500 });
    expect(config.gateway.limits).toEqual({
      maxRequestBodyBytes: 1048576,
      connectionBufferBytes: 1048576,
      streamIdleTimeoutMs: 300_000,
      requestTimeoutMs: 60_000,
      webSocketConnections: 5_000,
    });
    expect(config.apis).toEqual([]);
  });

  it('keeps the gateway limits where a buffered body still fits the engine message', () => {
    expect(problems('gateway:\n  limits:\n    maxRequestBodyBytes: 67108864\n')).toEqual([
      'gateway.yaml:3:5: gateway.limits.maxRequestBodyBytes: must be at most 8388608, got 67108864',
    ]);
  });

  it('reads an API with operations', () => {
    const config = parseConfig(
      'apis:\n  - id: courses\n    urlSuffix: courses\n    serviceUrl: http://127.0.0.1:8081\n    operations:\n      - { method: GET, urlTemplate: "/api/Course/{id}" }\n',
      'gateway.yaml',
    );
    expect(config.apis[0]).toMatchObject({
      id: 'courses',
      urlSuffix: 'courses',
      operations: [{ method: 'GET', urlTemplate: '/api/Course/{id}' }],
    });
  });

  it('names file, line, column and key path of an unknown key', () => {
    expect(problems('gateway:\n  http:\n    prot: 80\n')).toEqual([
      'gateway.yaml:3:5: gateway.http.prot: unknown key "prot"',
    ]);
  });

  it('words every problem itself: the wording of zod never reaches a user', () => {
    expect(problems('gateway: "0.0.0.0:8080"\n')).toEqual([
      'gateway.yaml:1:1: gateway: must be an object, got a string ("0.0.0.0:8080")',
    ]);
    expect(
      problems(
        'apis:\n  - { id: a, urlSuffix: a, serviceUrl: http://x, operations: [{ method: FETCH, urlTemplate: / }] }\n',
      ),
    ).toEqual([
      expect.stringMatching(
        /apis\[0\]\.operations\[0\]\.method: must be one of "GET", "HEAD", .*, got "FETCH"$/,
      ),
    ]);
    expect(problems('apis: {}\n')).toEqual(['gateway.yaml:1:1: apis: must be an array, got an object']);
    expect(problems('envoy: { concurrency: 0 }\n')).toEqual([
      'gateway.yaml:1:10: envoy.concurrency: must be at least 1, got 0',
    ]);
    for (const text of [
      'gateway: "0.0.0.0:8080"\n',
      'apis: {}\n',
      'envoy: { concurrency: 0, logLevel: loud }\n',
      'engine: { ports: [1.5] }\n',
      'apis: [{ id: a, urlSuffix: a, serviceUrl: 1 }]\n',
    ]) {
      for (const problem of problems(text)) {
        expect(problem).not.toMatch(/Invalid (input|option)|expected \w+, received|Too (big|small)/);
      }
    }
  });

  it('takes a listener as "host:port", as docs/configuration.md writes it, or as { host, port }', () => {
    const written = (text: string) => parseConfig(text, 'gateway.yaml');
    expect(written('gateway: { http: "0.0.0.0:8080" }\n').gateway.http).toEqual({
      host: '0.0.0.0',
      port: 8080,
    });
    expect(written('gateway: { http: { host: 0.0.0.0, port: 8080 } }\n').gateway.http).toEqual({
      host: '0.0.0.0',
      port: 8080,
    });
    expect(written('admin: "[::1]:9902"\nservice: 127.0.0.1:0\n')).toMatchObject({
      admin: { host: '::1', port: 9902 },
      service: { host: '127.0.0.1', port: 0 },
    });
    expect(problems('gateway:\n  http: "0.0.0.0"\n')).toEqual([
      'gateway.yaml:2:3: gateway.http: must be "host:port" or { host, port }, got "0.0.0.0"',
    ]);
    expect(problems('gateway:\n  http: "0.0.0.0:99999"\n')).toEqual([
      'gateway.yaml:2:3: gateway.http.port: must be at most 65535, got 99999',
    ]);
  });

  it('rejects an unknown top-level key', () => {
    expect(problems('apiz: []\n')).toEqual(['gateway.yaml:1:1: apiz: unknown key "apiz"']);
  });

  it('reports every problem with what was found', () => {
    expect(
      problems(
        'gateway:\n  http:\n    port: 99999\napis:\n  - id: a\n    urlSuffix: /bad\n    serviceUrl: ftp://x\n',
      ),
    ).toEqual([
      'gateway.yaml:3:5: gateway.http.port: must be at most 65535, got 99999',
      'gateway.yaml:6:5: apis[0].urlSuffix: must be path segments without leading or trailing "/", e.g. "courses" or "v1/courses", got "/bad"',
      'gateway.yaml:7:5: apis[0].serviceUrl: must be an http:// or https:// URL, got "ftp://x"',
    ]);
  });

  it('points a missing required key at the object that lacks it', () => {
    expect(problems('apis:\n  - id: a\n    urlSuffix: a\n')).toEqual([
      'gateway.yaml:2:5: apis[0].serviceUrl: is required',
    ]);
  });

  it('checks API versions against their version sets (path versioning)', () => {
    const text = [
      'versionSets: [{ id: orders }]',
      'apis:',
      '  - { id: a, urlSuffix: orders/v1, serviceUrl: "http://h", version: { set: orders, name: v1 } }',
      '  - { id: b, urlSuffix: orders/two, serviceUrl: "http://h", version: { set: orders, name: v1 } }',
      '  - { id: c, urlSuffix: c, serviceUrl: "http://h", version: { set: missing, name: v3 } }',
      '  - { id: d, urlSuffix: orders, serviceUrl: "http://h", version: { set: orders, name: "" } }',
      '',
    ].join('\n');
    expect(problems(text)).toEqual([
      'gateway.yaml:4:85: apis[1].version.name: version "v1" of "orders" is already apis[0]',
      'gateway.yaml:4:14: apis[1].urlSuffix: path versioning: the URL suffix must end with the version "/v1", got "orders/two"',
      'gateway.yaml:5:63: apis[2].version.set: no version set "missing" (known: orders)',
    ]);
  });

  it('checks header and query version sets: the name the version travels in, one shared suffix, one name per version', () => {
    const text = [
      'versionSets:',
      '  - { id: orders, scheme: header, header: Api-Version }',
      '  - { id: lost, scheme: query }',
      '  - { id: mixed, scheme: path, header: Api-Version }',
      '  - { id: spaced, scheme: header, header: "Api Version" }',
      'apis:',
      '  - { id: a, urlSuffix: orders, serviceUrl: "http://h", version: { set: orders, name: "" } }',
      '  - { id: b, urlSuffix: orders, serviceUrl: "http://h", version: { set: orders, name: v2 } }',
      '  - { id: c, urlSuffix: orders/v3, serviceUrl: "http://h", version: { set: orders, name: v3 } }',
      '  - { id: d, urlSuffix: orders, serviceUrl: "http://h", version: { set: orders, name: v2 } }',
      '  - { id: e, urlSuffix: orders, serviceUrl: "http://h" }',
      '',
    ].join('\n');
    expect(problems(text)).toEqual([
      'gateway.yaml:3:17: versionSets[1].scheme: query versioning needs the query parameter that names the version: set "query"',
      'gateway.yaml:4:32: versionSets[2].header: "header" names the version only with scheme header, got scheme path',
      'gateway.yaml:5:35: versionSets[3].header: must be an HTTP header name (letters, digits and !#$%&\'*+-.^_`|~), got "Api Version"',
      'gateway.yaml:9:14: apis[2].urlSuffix: header versioning: every version of "orders" has the URL suffix of apis[0] ("orders"), got "orders/v3"',
      'gateway.yaml:10:81: apis[3].version.name: version "v2" of "orders" is already apis[1]',
      'gateway.yaml:11:14: apis[4].urlSuffix: URL suffix "orders" is already used by apis[3] on the same hosts (only versions of one header- or query-versioned set share a suffix)',
    ]);
  });

  it('rejects duplicate API ids and suffixes', () => {
    const text =
      'apis:\n  - { id: a, urlSuffix: x, serviceUrl: "http://h" }\n  - { id: a, urlSuffix: x, serviceUrl: "http://h" }\n';
    expect(problems(text)).toEqual([
      'gateway.yaml:3:7: apis[1].id: duplicate API id "a" (also apis[0])',
      'gateway.yaml:3:14: apis[1].urlSuffix: URL suffix "x" is already used by apis[0] on the same hosts (only versions of one header- or query-versioned set share a suffix)',
    ]);
  });

  it('rejects an operation that repeats another (same method, template up to parameter names and case) and a malformed template, each where it is', () => {
    const text = [
      'apis:',
      '  - id: a',
      '    urlSuffix: a',
      '    serviceUrl: http://h',
      '    operations:',
      '      - { id: one, method: GET, urlTemplate: "/x/{id}" }',
      '      - { id: two, method: GET, urlTemplate: "/X/{name}" }',
      '      - { id: three, method: POST, urlTemplate: "/x/{id}" }',
      '      - { id: four, method: GET, urlTemplate: "/x/{id}?b={b}&a={a}" }',
      '      - { id: five, method: GET, urlTemplate: "/x/{k}?a={c}&b={d}" }',
      '      - { id: six, method: GET, urlTemplate: "/y/{p}/{p}" }',
      '',
    ].join('\n');
    expect(problems(text)).toEqual([
      'gateway.yaml:7:33: apis[0].operations[1].urlTemplate: GET "/X/{name}" is the same operation as apis[0].operations[0] ("/x/{id}")',
      'gateway.yaml:10:34: apis[0].operations[4].urlTemplate: GET "/x/{k}?a={c}&b={d}" is the same operation as apis[0].operations[3] ("/x/{id}?b={b}&a={a}")',
      'gateway.yaml:11:33: apis[0].operations[5].urlTemplate: parameter "p" appears twice in "/y/{p}/{p}"',
    ]);
  });

  it('reports YAML syntax errors with their position', () => {
    expect(problems('apis: [\n')[0]).toMatch(/^gateway\.yaml:2:1: /);
  });

  it('rejects a duplicate key', () => {
    expect(problems('admin: { port: 1 }\nadmin: { port: 2 }\n')[0]).toMatch(
      /^gateway\.yaml:2:1: .*[Mm]ap keys must be unique/,
    );
  });
});
