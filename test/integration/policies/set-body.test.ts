import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * set-body: a literal, an expression reading the request body (Envoy buffers the body and sends it to the engine),
 * a Liquid template over the JSON body and the context, and the response body in outbound.
 */
describe('set-body through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) =>
      request.url === '/plain'
        ? { headers: { 'content-type': 'text/plain' }, body: 'backend says hi' }
        : undefined,
    );
    gateway = await startGateway(
      `apis:\n${apiYaml('body', backend.url, [
        ['upper', 'POST', '/upper', 'upper.xml'],
        ['json', 'POST', '/json', 'json.xml'],
        ['liquid', 'POST', '/liquid', 'liquid.xml'],
        ['liquid-date', 'POST', '/liquid-date', 'liquid-date.xml'],
        ['literal', 'GET', '/literal', 'literal.xml'],
        ['plain', 'GET', '/plain', 'wrap.xml'],
      ])}\n`,
      {
        'upper.xml': policy({
          inbound: '<set-body>@(context.Request.Body.As<string>().ToUpper())</set-body>',
        }),
        'json.xml': policy({
          inbound: `<set-body>@{
            var body = context.Request.Body.As<JObject>();
            body["total"] = (int)body["a"] + (int)body["b"];
            return body.ToString();
          }</set-body>`,
        }),
        'liquid.xml': policy({
          inbound: `<set-body template="liquid">{"user":"{{body.user.name | Upcase}}","items":{{body.items.size}},"tier":"{{context.Request.Headers.X-Tier}}","id":"{{context.Request.MatchedParameters.missing | Default: 'none'}}"}</set-body>`,
        }),
        // The docs' example of C# mode (https://learn.microsoft.com/azure/api-management/set-body-policy).
        'liquid-date.xml': policy({
          inbound: `<set-body template="liquid">{"start":"{{body.foo.startDateTime| Date:"yyyyMMddTHH:mm:ssZ"}}","day":"{{body.foo.startDateTime | Date:"dddd d MMMM yyyy"}}"}</set-body>`,
        }),
        'literal.xml': policy({ outbound: '<set-body>replaced by the gateway</set-body>' }),
        'wrap.xml': policy({
          outbound: '<set-body>@("[" + context.Response.Body.As<string>() + "]")</set-body>',
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('an expression reading the request body replaces it (buffered request body phase)', async () => {
    const response = await fetch(`${gateway.url}/body/upper`, { method: 'POST', body: 'make me loud' });
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.body).toBe('MAKE ME LOUD');
  });

  it('an expression over the JSON body', async () => {
    await fetch(`${gateway.url}/body/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 2, b: 40 }),
    });
    const received = backend.received.at(-1)!;
    expect(JSON.parse(received.body)).toEqual({ a: 2, b: 40, total: 42 });
    expect(Number(received.headers['content-length'])).toBe(Buffer.byteLength(received.body));
  });

  it('a Liquid template reads the JSON body and the request context', async () => {
    await fetch(`${gateway.url}/body/liquid`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Tier': 'gold' },
      body: JSON.stringify({ user: { name: 'ada' }, items: [1, 2, 3] }),
    });
    expect(JSON.parse(backend.received.at(-1)!.body)).toEqual({
      user: 'ADA',
      items: 3,
      tier: 'gold',
      id: 'none',
    });
  });

  it('the Liquid Date filter takes C# date formats', async () => {
    await fetch(`${gateway.url}/body/liquid-date`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ foo: { startDateTime: '2017-03-01T10:30:05Z' } }),
    });
    expect(JSON.parse(backend.received.at(-1)!.body)).toEqual({
      start: '20170301T10:30:05Z',
      day: 'Wednesday 1 March 2017',
    });
  });

  it('a literal replaces the response body', async () => {
    const response = await fetch(`${gateway.url}/body/literal`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('replaced by the gateway');
  });

  it('an expression reading the response body (buffered response body phase)', async () => {
    const response = await fetch(`${gateway.url}/body/plain`);
    expect(response.headers.get('content-type')).toBe('text/plain');
    expect(await response.text()).toBe('[backend says hi]');
  });
});
