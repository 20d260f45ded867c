import { describe, expect, it } from 'vitest';
import { durationSeconds } from '../../../src/config/backend-schema.js';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';

/**
 * The `backends` section as API Management's backend entity
 * (https://learn.microsoft.com/azure/api-management/backends): each problem at its file:line:col.
 */
function problems(text: string): string[] {
  try {
    parseConfig(text, 'gateway.yaml');
    return [];
  } catch (error) {
    if (error instanceof ConfigError)
      return error.message.split('\n').filter((line) => line.includes('gateway.yaml:'));
    throw error;
  }
}

const singles = `backends:
  - id: east
    url: http://127.0.0.1:9001
    circuitBreaker:
      rules:
        - name: throttled
          failureCondition: { count: 1, interval: PT1M, statusCodeRanges: [{ min: 429, max: 429 }], errorReasons: [Throttled] }
          tripDuration: PT30S
          acceptRetryAfter: true
  - id: west
    url: https://west.example.com/openai
    credentials:
      header: { api-key: ["{{west-key}}"] }
      query: { code: [abc] }
      authorization: { scheme: Bearer, parameter: token }
    tls: { validateCertificateChain: false, validateCertificateName: false }
`;

describe('the backends section', () => {
  it('loads single backends and a pool with API Management’s fields', () => {
    const config = parseConfig(
      `${singles}  - id: pool
    type: pool
    pool:
      services:
        - { id: /backends/east, priority: 1, weight: 3 }
        - { id: west, priority: 2 }
`,
      'gateway.yaml',
    );
    expect(config.backends.map((backend) => [backend.id, backend.type ?? 'single'])).toEqual([
      ['east', 'single'],
      ['west', 'single'],
      ['pool', 'pool'],
    ]);
    expect(config.backends[2]!.pool!.services[1]).toEqual({ id: 'west', priority: 2, weight: 1 });
    expect(config.backends[0]!.circuitBreaker!.rules[0]!.acceptRetryAfter).toBe(true);
  });

  it('loads a pool’s session affinity as API Management writes it, and refuses a source or cookie name it cannot use', () => {
    const config = parseConfig(
      `${singles}  - id: pool
    type: pool
    pool:
      services: [{ id: east }, { id: west }]
      sessionAffinity: { sessionId: { source: Cookie, name: APIM-Backend-Affinity } }
`,
      'gateway.yaml',
    );
    expect(config.backends[2]!.pool!.sessionAffinity).toEqual({
      sessionId: { source: 'Cookie', name: 'APIM-Backend-Affinity' },
    });
    const found = problems(`${singles}  - id: pool
    type: pool
    pool:
      services: [{ id: east }, { id: west }]
      sessionAffinity: { sessionId: { source: Header, name: "a b" } }
`);
    expect(found).toEqual([
      expect.stringMatching(/^gateway\.yaml:21:39: .*source/),
      expect.stringMatching(/^gateway\.yaml:21:55: .*must be a cookie name/),
    ]);
  });

  it('refuses a pool naming an unknown backend, at its line and column', () => {
    expect(
      problems(`${singles}  - id: pool
    type: pool
    pool:
      services:
        - { id: east }
        - { id: north }
`),
    ).toEqual([
      expect.stringMatching(/^gateway\.yaml:22:13: .*no backend "north" \(single backends: east, west\)/),
    ]);
  });

  it('refuses a pool inside a pool, and a pool with a URL of its own', () => {
    const found = problems(`${singles}  - id: inner
    type: pool
    pool: { services: [{ id: east }] }
  - id: outer
    type: pool
    url: http://127.0.0.1:1
    pool: { services: [{ id: inner }] }
`);
    expect(found).toEqual([
      expect.stringMatching(/^gateway\.yaml:22:5: .*a pool has no url of its own/),
      expect.stringMatching(/^gateway\.yaml:23:26: .*"inner" is a pool: a pool holds single backends only/),
    ]);
  });

  it('refuses a weight or a priority out of range', () => {
    const found = problems(`${singles}  - id: pool
    type: pool
    pool:
      services:
        - { id: east, weight: 101 }
        - { id: west, priority: -1 }
`);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^gateway\.yaml:21:23: .*weight: must be at most 100, got 101/);
    expect(found[1]).toMatch(/^gateway\.yaml:22:23: .*priority/);
  });

  it('refuses a circuit breaker rule without a failure condition, or one that says no status', () => {
    const found = problems(`backends:
  - id: a
    url: http://127.0.0.1:1
    circuitBreaker:
      rules:
        - { name: none, tripDuration: PT1M }
  - id: b
    url: http://127.0.0.1:2
    circuitBreaker:
      rules:
        - { name: countless, tripDuration: PT1M, failureCondition: { interval: PT1M, count: 2 } }
`);
    expect(found).toEqual([
      expect.stringMatching(
        /^gateway\.yaml:6:11: .*needs a failureCondition with statusCodeRanges and count or percentage/,
      ),
      expect.stringMatching(
        /^gateway\.yaml:11:50: .*needs a failureCondition with statusCodeRanges and count or percentage/,
      ),
    ]);
  });

  it('refuses a single backend without a URL and a credential naming an unknown certificate', () => {
    const found = problems(`backends:
  - id: a
    credentials: { certificateIds: [missing] }
`);
    expect(found).toEqual([
      expect.stringMatching(/^gateway\.yaml:2:5: .*a single backend needs a url/),
      expect.stringMatching(/^gateway\.yaml:3:37: .*no certificate "missing" in tls\.certificates/),
    ]);
  });

  it('reads ISO 8601 durations as API Management writes them', () => {
    expect(durationSeconds('PT1M')).toBe(60);
    expect(durationSeconds('PT1H30M5S')).toBe(5405);
    expect(durationSeconds('P1D')).toBe(86_400);
    expect(durationSeconds('1 minute')).toBeUndefined();
    expect(durationSeconds('PT')).toBeUndefined();
  });
});
