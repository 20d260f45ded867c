import { describe, expect, it } from 'vitest';
import {
  minSecretChars,
  redactFields,
  redactHeaders,
  redactText,
  redactUrl,
  SecretValues,
} from '../../src/redact.js';

const SECRET = 'S3cr3t-Value_0123';
/** A compact JWS (header {"alg":"HS256"}, payload {"sub":"user-42"}) and a JWE's five parts. */
const JWS = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.Xo5cJ7m3K1yq0vPz_4s-Ab9QeTt2LlWnHh8dRr6GgUk';
const JWE = 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..bXktaXY.Y2lwaGVydGV4dA.dGFnLXZhbHVl';

describe('redactUrl', () => {
  it('replaces the values of credential query parameters and keeps everything else byte for byte', () => {
    expect(redactUrl(`/courses/api/Course?subscription-key=${SECRET}&page=2`)).toBe(
      '/courses/api/Course?subscription-key=***&page=2',
    );
    expect(redactUrl(`/x?a=%20b&Api-Key=${SECRET}&access_token=${SECRET}#frag`)).toBe(
      '/x?a=%20b&Api-Key=***&access_token=***#frag',
    );
    expect(redactUrl(`/cb?code=${SECRET}&state=xyz`)).toBe('/cb?code=***&state=xyz');
    expect(redactUrl(`/t?client_secret=${SECRET}&token=${SECRET}&key=${SECRET}`)).toBe(
      '/t?client_secret=***&token=***&key=***',
    );
  });

  it('reads a name as a server does: percent-encoded and any case', () => {
    expect(redactUrl(`/x?subscription%2Dkey=${SECRET}`)).toBe('/x?subscription%2Dkey=***');
    expect(redactUrl(`/x?SUBSCRIPTION-KEY=${SECRET}`)).toBe('/x?SUBSCRIPTION-KEY=***');
  });

  it("redacts an API's own subscription-key parameter name", () => {
    expect(redactUrl(`/x?mykey=${SECRET}&q=1`, ['MyKey'])).toBe('/x?mykey=***&q=1');
    expect(redactUrl(`/x?mykey=${SECRET}`)).toBe(`/x?mykey=${SECRET}`);
  });

  it("redacts a URL's password", () => {
    expect(redactUrl(`redis://user:${SECRET}@127.0.0.1:6379/0`)).toBe('redis://user:***@127.0.0.1:6379/0');
    expect(redactUrl(`https://:${SECRET}@host/p?sig=${SECRET}`)).toBe('https://:***@host/p?sig=***');
  });

  it('returns the same string when there is nothing to redact', () => {
    const url = '/courses/api/Course?page=2&size=10';
    expect(redactUrl(url)).toBe(url);
    expect(redactUrl('/plain/path')).toBe('/plain/path');
  });
});

describe('redactHeaders', () => {
  it('replaces credential headers in pairs and in records, whatever the case', () => {
    expect(
      redactHeaders([
        ['Authorization', `Bearer ${SECRET}`],
        ['ocp-apim-subscription-key', SECRET],
        ['Cookie', `sid=${SECRET}`],
        ['accept', 'application/json'],
      ]),
    ).toEqual([
      ['Authorization', '***'],
      ['ocp-apim-subscription-key', '***'],
      ['Cookie', '***'],
      ['accept', 'application/json'],
    ]);
    expect(
      redactHeaders({ 'set-cookie': [`sid=${SECRET}`], 'Proxy-Authorization': `Basic ${SECRET}`, host: 'h' }),
    ).toEqual({ 'set-cookie': '***', 'Proxy-Authorization': '***', host: 'h' });
  });
});

describe('redactText', () => {
  it.each([
    [`GET /api?subscription-key=${SECRET} failed`, 'GET /api?subscription-key=*** failed'],
    [`Authorization: Bearer ${SECRET}`, 'Authorization: ***'],
    [`{"authorization":"Bearer ${SECRET}","x":1}`, '{"authorization":"***","x":1}'],
    [`token was Bearer ${SECRET}.`, 'token was Bearer ***'],
    [`header Basic ${Buffer.from(`u:${SECRET}`).toString('base64')}`, 'header Basic ***'],
    [`Set-Cookie: sid=${SECRET}; Path=/`, 'Set-Cookie: ***'],
    [`Ocp-Apim-Subscription-Key=${SECRET}`, 'Ocp-Apim-Subscription-Key=***'],
    [
      `grant_type=authorization_code&code=${SECRET}&client_secret=${SECRET}`,
      'grant_type=authorization_code&code=***&client_secret=***',
    ],
    [
      `redis connection lost (redis://:${SECRET}@10.0.0.1:6379)`,
      'redis connection lost (redis://:***@10.0.0.1:6379)',
    ],
    [`"variables":{"jwt":"${JWS}"}`, '"variables":{"jwt":"***"}'],
    [`x-token ${JWS}, then ${JWE}.`, 'x-token ***, then ***.'],
  ])('%s', (input, expected) => {
    expect(redactText(input)).toBe(expected);
    expect(redactText(expected)).toBe(expected);
  });

  it('leaves ordinary messages alone', () => {
    for (const text of [
      'policy statement failed',
      'the authorization_code grant needs a code_challenge',
      'GET /courses/api/Course?page=2 → 200',
      'expected a number: got "abc" at 3:14',
      'version 1.2.3 of eyJ.json',
    ]) {
      expect(redactText(text)).toBe(text);
    }
  });

  it('stays linear on long hostile input', () => {
    const texts = [
      'a'.repeat(200_000),
      `x://${'a'.repeat(200_000)}:${'b'.repeat(200_000)}`,
      `Bearer${' '.repeat(200_000)}`,
      `authorization${' '.repeat(200_000)}`,
      '?key='.repeat(50_000),
      `eyJ${'a'.repeat(200_000)}`,
      'eyJa.'.repeat(50_000),
    ];
    const started = performance.now();
    for (const text of texts) redactText(text);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('redactFields', () => {
  it('redacts strings at any level and credential-named fields, copying only what changed', () => {
    const clean = { requestId: 'r1', path: '/x?page=1', nested: { list: ['a', 'b'] } };
    expect(redactFields(clean)).toBe(clean);
    const dirty = {
      path: `/x?subscription-key=${SECRET}`,
      headers: { Authorization: `Bearer ${SECRET}`, accept: '*/*' },
      entries: [{ message: `Bearer ${SECRET}` }],
      cookie: SECRET,
      kept: clean.nested,
    };
    const redacted = redactFields(dirty);
    expect(JSON.stringify(redacted)).not.toContain(SECRET);
    expect(redacted.kept).toBe(clean.nested);
    expect(redacted.headers.accept).toBe('*/*');
    expect(dirty.path).toContain(SECRET);
  });
});

describe('SecretValues', () => {
  it('does nothing when empty', () => {
    const values = new SecretValues();
    expect(values.size).toBe(0);
    expect(values.redact(`key ${SECRET}`)).toBe(`key ${SECRET}`);
  });

  it('replaces each value wherever it occurs, a longer one whole before a shorter one inside it', () => {
    const values = new SecretValues(['abc']);
    values.add(`abc-${SECRET}`);
    expect(values.redact(`x abc-${SECRET}y abc "${SECRET}"`)).toBe(`x ***y *** "${SECRET}"`);
    expect(values.redact('***')).toBe('***');
  });

  it('ignores a value found at run time shorter than the minimum, and one already known', () => {
    const values = new SecretValues();
    expect(values.add('x'.repeat(minSecretChars - 1))).toBe(false);
    expect(values.add(SECRET)).toBe(true);
    expect(values.add(SECRET)).toBe(false);
    expect(values.size).toBe(1);
  });
});

describe('redactFields with a text redaction of its own', () => {
  it("passes every string through it, and still replaces credential-named fields' values", () => {
    const values = new SecretValues([SECRET]);
    const fields = { trace: `nv=${SECRET}`, nested: { list: [`x ${SECRET}`] }, cookie: 'c', clean: 'kept' };
    expect(redactFields(fields, 4, (text) => values.redact(text))).toEqual({
      trace: 'nv=***',
      nested: { list: ['x ***'] },
      cookie: '***',
      clean: 'kept',
    });
  });
});
