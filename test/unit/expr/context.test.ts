import { describe, expect, it } from 'vitest';
import {
  compileExpression,
  decodeUrlPath,
  encodeUrlPath,
  LastErrorInfo,
  MessageBody,
  ResponseModel,
  readsBody,
  UrlModel,
} from '../../../src/expr/index.js';
import { failure, makeContext, show, showBlock } from '../../doubles/policy-context.js';

describe('spec §4.3 sample expressions', () => {
  it('reads a query parameter', () => {
    expect(show('context.Request.Url.Query.GetValueOrDefault("courseID")')).toBe('CS101');
  });
  it('compares the customer key header', () => {
    expect(show('context.Request.Headers.GetValueOrDefault("Customer-Key","") == "secret-key"')).toBe('True');
    expect(show('context.Request.Headers.GetValueOrDefault("Customer-Key","") == "other"')).toBe('False');
  });
  it('limits the content length', () => {
    expect(show('int.Parse(context.Request.Headers.GetValueOrDefault("Content-Length","0")) < 512000')).toBe(
      'True',
    );
    const ctx = makeContext();
    ctx.request.headers.set('Content-Length', '900000');
    expect(
      show('int.Parse(context.Request.Headers.GetValueOrDefault("Content-Length","0")) < 512000', ctx),
    ).toBe('False');
    ctx.request.headers.delete('Content-Length');
    expect(
      show('int.Parse(context.Request.Headers.GetValueOrDefault("Content-Length","0")) < 512000', ctx),
    ).toBe('True');
  });
  it('checks the response status', () => {
    expect(show('context.Response.StatusCode == 200')).toBe('True');
  });
  it('reads the last error', () => {
    const ctx = makeContext();
    ctx.lastError = new LastErrorInfo({
      source: 'rate-limit',
      reason: 'RateLimitExceeded',
      message: 'Rate limit is exceeded',
    });
    expect(show('context.LastError.Message.Contains("exceeded")', ctx)).toBe('True');
    expect(show('context.LastError.Source + "/" + context.LastError.Reason', ctx)).toBe(
      'rate-limit/RateLimitExceeded',
    );
  });
});

describe('context model', () => {
  it.each([
    ['context.Request.Method', 'POST'],
    ['context.Request.Url.Scheme', 'https'],
    ['context.Request.Url.Host', 'api.example.com'],
    ['context.Request.Url.Port', '8443'],
    ['context.Request.Url.Path', '/courses/42'],
    ['context.Request.Url.QueryString', '?courseID=CS101&tag=a&tag=b'],
    ['context.Request.Url.ToString()', 'https://api.example.com:8443/courses/42?courseID=CS101&tag=a&tag=b'],
    ['context.Request.OriginalUrl.Host', 'api.example.com'],
    ['context.Request.Url.Query.GetValueOrDefault("tag")', 'a,b'],
    ['context.Request.Url.Query["tag"].Length', '2'],
    ['context.Request.Url.Query.GetValueOrDefault("missing", "dflt")', 'dflt'],
    ['context.Request.Url.Query.GetValueOrDefault("missing") == null', 'True'],
    ['context.Request.Headers.GetValueOrDefault("customer-key")', 'secret-key'],
    ['context.Request.Headers.GetValueOrDefault("Accept")', 'application/json,text/plain'],
    ['context.Request.Headers["Accept"][1]', 'text/plain'],
    ['context.Request.Headers.ContainsKey("ACCEPT")', 'True'],
    ['context.Request.Headers.Count', '4'],
    ['context.Request.Headers.Keys.Contains("Accept")', 'True'],
    ['context.Request.Headers.Any(h => h.Key == "Customer-Key")', 'True'],
    ['context.Request.IpAddress', '203.0.113.7'],
    ['context.Request.MatchedParameters["id"]', '42'],
    ['context.Request.MatchedParameters.GetValueOrDefault("nope", "x")', 'x'],
    ['context.Request.Body.As<JObject>()["name"]', 'Ada'],
    ['context.Request.Body.As<JObject>(preserveContent: true)["age"]', '36'],
    ['context.Request.Body.As<string>(true).Length > 10', 'True'],
    ['context.Request.Body.As<byte[]>().Length > 10', 'True'],
    ['context.Request.Certificate == null', 'True'],
    ['context.Response.StatusReason', 'OK'],
    ['context.Response.Body.As<JObject>()["ok"]', '1'],
    ['context.Variables["name"]', 'Ada'],
    ['(string)context.Variables["name"]', 'Ada'],
    ['(int)context.Variables["count"] + 1', '4'],
    ['(bool)context.Variables["flag"]', 'True'],
    ['context.Variables.ContainsKey("name")', 'True'],
    ['context.Variables.ContainsKey("nope")', 'False'],
    ['context.Variables.GetValueOrDefault<string>("name")', 'Ada'],
    ['context.Variables.GetValueOrDefault<string>("nope", "fallback")', 'fallback'],
    ['context.Variables.GetValueOrDefault<int>("nope")', '0'],
    ['context.Variables.GetValueOrDefault("count")', '3'],
    ['context.RequestId.ToString()', '0f8fad5b-d9cb-469f-a165-70867728950e'],
    ['context.RequestId.ToString("N")', '0f8fad5bd9cb469fa16570867728950e'],
    ['context.Timestamp.ToString("o")', '2024-03-01T12:00:00.0000000Z'],
    ['context.Elapsed.TotalMilliseconds', '1500'],
    ['context.Tracing', 'False'],
    ['context.Deployment.Region', 'local'],
    ['context.Api.Name', ''],
    ['context.Product == null', 'True'],
    ['context.User?.Id ?? "anonymous"', 'anonymous'],
    ['context.Subscription?.Name', ''],
    ['context.Request.Headers.GetValueOrDefault("Authorization").AsBasic().UserId', 'user'],
    ['context.Request.Headers.GetValueOrDefault("Authorization").AsBasic().Password', 'pass'],
    ['context.Request.Body.AsFormUrlEncodedContent()["name"] == null', 'error'],
  ])('%s → %s', (expr, expected) => {
    if (expected === 'error') {
      expect(failure(expr)).not.toBe('no error');
      return;
    }
    expect(show(expr)).toBe(expected);
  });

  it('consumes the body unless preserveContent is true', () => {
    const ctx = makeContext();
    expect(show('context.Request.Body.As<string>(preserveContent: true).Length', ctx)).toBe('73');
    expect(ctx.request.body!.consumed).toBe(false);
    expect(show('context.Request.Body.As<JObject>()["name"]', ctx)).toBe('Ada');
    expect(ctx.request.body!.consumed).toBe(true);
    expect(failure('context.Request.Body.As<string>()', 'expression', ctx)).toContain(
      'InvalidOperationException',
    );
  });

  it('reads form bodies', () => {
    const ctx = makeContext('a=1&b=x+y&a=2');
    expect(show('context.Request.Body.AsFormUrlEncodedContent(true)["b"][0]', ctx)).toBe('x y');
    expect(show('context.Request.Body.AsFormUrlEncodedContent().GetValueOrDefault("a")', ctx)).toBe('1,2');
  });

  it('GetValueOrDefault<T> throws when the stored type differs (as documented)', () => {
    expect(failure('context.Variables.GetValueOrDefault<int>("name")')).toContain('InvalidCastException');
  });

  it('reads a send-request response stored in a variable', () => {
    const ctx = makeContext();
    ctx.variables.set(
      'tokenResponse',
      new ResponseModel({
        statusCode: 201,
        body: new MessageBody('{"access_token":"abc","expires_in":3600}'),
      }),
    );
    expect(
      show('(string)((IResponse)context.Variables["tokenResponse"]).Body.As<JObject>()["access_token"]', ctx),
    ).toBe('abc');
    const ctx2 = makeContext();
    ctx2.variables.set(
      'tokenResponse',
      new ResponseModel({
        statusCode: 201,
        body: new MessageBody('{"access_token":"abc","expires_in":3600}'),
      }),
    );
    expect(
      show('(int)((IResponse)context.Variables["tokenResponse"]).Body.As<JObject>()["expires_in"]', ctx2),
    ).toBe('3600');
    expect(show('((IResponse)context.Variables["tokenResponse"]).StatusCode', ctx2)).toBe('201');
  });

  it('traces through context.Trace', () => {
    const seen: string[] = [];
    const ctx = makeContext();
    (ctx as { onTrace: (m: string) => void }).onTrace = (m) => seen.push(m);
    expect(showBlock('context.Trace("hello " + 1); return true;', ctx)).toBe('True');
    expect(seen).toEqual(['hello 1']);
  });

  it('reports the context paths an expression reads', () => {
    const refs = (t: string, kind: 'expression' | 'block' = 'expression') =>
      [...compileExpression(t, { kind }).references].sort();
    expect(refs('context.Request.Headers.GetValueOrDefault("a","")')).toEqual(['Request', 'Request.Headers']);
    expect(refs('context.Response.Body.As<string>()')).toEqual(['Response', 'Response.Body']);
    expect(refs('var r = context.Request; return r.Method;', 'block')).toEqual(['Request', 'Request.*']);
    expect(refs('(string)context.Variables["x"]')).toEqual(['Variables']);
    expect(refs('1 + 1')).toEqual([]);
    const e = compileExpression('context.Request.Body.As<JObject>()', { kind: 'expression' });
    expect(readsBody(e, 'Request')).toBe(true);
    expect(readsBody(e, 'Response')).toBe(false);
    expect(readsBody(compileExpression('var c = context; return 1;', { kind: 'block' }), 'Response')).toBe(
      true,
    );
  });
});

describe('URL paths as policies see them', () => {
  it.each([
    ['/api%2fCourse/1', '/api%2fCourse/1'],
    ['/a%20b/%C3%A9', '/a b/é'],
    ['/literal%25percent', '/literal%25percent'],
    ['/%252F', '/%252F'],
    ['/a%5Cb', '/a\\b'],
    ['/a%3Fb%23c', '/a%3Fb%23c'],
  ])('%s is %s, and encodes back to the same path', (encoded, decoded) => {
    expect(decodeUrlPath(encoded)).toBe(decoded);
    expect(encodeUrlPath(decoded).toLowerCase()).toBe(encoded.toLowerCase());
  });

  it('never encodes an encoded slash twice', () => {
    expect(UrlModel.parse('http://h/api%2fCourse/1').path).toBe('/api%2fCourse/1');
    expect(UrlModel.parse('http://h/api%2fCourse/1').toString()).toBe('http://h/api%2fCourse/1');
  });
});

describe('decodeUrlPath', () => {
  it('keeps a malformed escape as written and decodes the escapes around it (found by fuzzing: decodeURI threw)', () => {
    expect(decodeUrlPath('/a/%ZZ%41/%')).toBe('/a/%ZZA/%');
    expect(decodeUrlPath('/a%2Fb%25')).toBe('/a%2Fb%25');
  });
});
