import { describe, expect, it } from 'vitest';
import { parseJwt, VariablesModel } from '../../../src/expr/index.js';
import { RequestSecrets, tokenOf } from '../../../src/policy/request-secrets.js';
import { fakeServices, pipelineOf, policies, request, runAll } from '../../doubles/policy-services.js';

/** A compact JWS with the given claims (its signature is not checked here). */
function jws(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJlLWJ5dGVz`;
}

function secretsOf(
  init: { named?: string[]; headers?: [string, string][]; url?: string } = {},
  variables = new VariablesModel(),
) {
  return new RequestSecrets(
    init.named ?? [],
    { headers: init.headers ?? [], url: init.url ?? 'https://gw.example.com/api/Course' },
    variables,
  );
}

describe('RequestSecrets', () => {
  it('leaves a text alone when the request has no secret value', () => {
    const secrets = secretsOf({ headers: [['accept', 'application/json']], url: 'https://gw/x?page=2' });
    const text = 'looking up course 42 with application/json page=2';
    expect(secrets.redact(text)).toBe(text);
  });

  it('replaces a secret named value wherever it occurs, whatever its length, longest first', () => {
    const secrets = secretsOf({ named: ['abc', 'abc-def-ghi'] });
    expect(secrets.redact('nv=abc-def-ghi and abc; again abcabc')).toBe('nv=*** and ***; again ******');
  });

  it('replaces the credentials the request carried, alone or inside other text', () => {
    const basic = Buffer.from('partner:hunter2-password').toString('base64');
    const secrets = secretsOf({
      headers: [
        ['Authorization', 'raw-opaque-credential-7d41'],
        ['Proxy-Authorization', `Basic ${basic}`],
        ['Ocp-Apim-Subscription-Key', 'subscription-key-0123'],
        ['Cookie', 'session=cookie-session-9f3a; lang=en'],
        ['x-course', 'course-catalogue-entry'],
      ],
      url: 'https://gw.example.com/api/Course?code=oauth-code-55aa&page=2',
    });
    expect(secrets.redact('x raw-opaque-credential-7d41 y')).toBe('x *** y');
    expect(secrets.redact(`pw hunter2-password of ${basic}`)).toBe('pw *** of ***');
    expect(secrets.redact('key subscription-key-0123')).toBe('key ***');
    expect(secrets.redact('sid cookie-session-9f3a')).toBe('sid ***');
    // What is not a credential stays, so the text still says what was sent.
    expect(secrets.redact('Cookie: session=cookie-session-9f3a; lang=en')).toBe(
      'Cookie: session=***; lang=en',
    );
    expect(secrets.redact('got oauth-code-55aa')).toBe('got ***');
    // Not a credential header; and a cookie value this short would turn ordinary words into ***.
    expect(secrets.redact('course-catalogue-entry en')).toBe('course-catalogue-entry en');
  });

  it("replaces an authorization scheme's credentials, with the scheme or taken out alone, and keeps the scheme", () => {
    const secrets = secretsOf({ headers: [['authorization', 'Bearer opaque-access-token-31c2']] });
    expect(secrets.redact('x Bearer opaque-access-token-31c2, t opaque-access-token-31c2')).toBe(
      'x Bearer ***, t ***',
    );
  });

  it('replaces a token the gateway obtained, once added', () => {
    const secrets = secretsOf();
    expect(secrets.redact('using identity-token-8e21aa')).toBe('using identity-token-8e21aa');
    secrets.add('identity-token-8e21aa');
    expect(secrets.redact('using identity-token-8e21aa')).toBe('using ***');
  });

  it('replaces the tokens stored in variables, a Jwt or a string that is one, as they are stored', () => {
    const variables = new VariablesModel();
    const secrets = secretsOf({}, variables);
    const stored = jws({ sub: 'user-42' });
    const copied = jws({ sub: 'user-43' });
    // Values only (the shapes are redactText's): not stored yet, not known.
    expect(secrets.redact(`x ${stored}`)).toBe(`x ${stored}`);
    variables.set('jwt', parseJwt(stored));
    variables.set('copy', `Bearer ${copied}`);
    variables.set('plain', 'not.a.token-at-all');
    expect(secrets.redact(`[${stored}] [${copied}] not.a.token-at-all`)).toBe(
      '[***] [***] not.a.token-at-all',
    );
  });
});

describe('tokenOf', () => {
  it('finds the token a variable holds: a Jwt, or a string that is one', () => {
    const token = jws({ sub: 'user-42' });
    expect(tokenOf(parseJwt(token))).toBe(token);
    expect(tokenOf(token)).toBe(token);
    expect(tokenOf(`Bearer ${token}`)).toBe(token);
    for (const value of ['a.b.c', 'https://example.com/a.b', 42, null, 'eyJ.not.json-at-all-here'])
      expect(tokenOf(value)).toBeUndefined();
  });
});

describe('a run removes its secret values from what it reports', () => {
  it("from LastError.Message, which quotes a credential header's value that has no shape of its own", async () => {
    const { run, response } = await runAll(
      pipelineOf(
        policies({
          inbound:
            '<set-variable name="n" value="@(int.Parse(context.Request.Headers.GetValueOrDefault(&quot;X-Api-Key&quot;, &quot;&quot;)))" />',
        }),
      ),
      request({ headers: [['X-Api-Key', 'partner-api-key-4c1d']] }),
      fakeServices(),
    );
    expect(response.status).toBe(500);
    expect(run.context.lastError?.reason).toBe('ExpressionValueEvaluationFailure');
    expect(run.context.lastError?.message).toContain('***');
    expect(run.context.lastError?.message).not.toContain('partner-api-key-4c1d');
  });
});
