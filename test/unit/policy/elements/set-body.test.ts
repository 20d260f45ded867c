import { describe, expect, it } from 'vitest';
import { inbound, outbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('set-body', () => {
  it('replaces the response body with literal text, kept as written', async () => {
    const { response } = await outbound('<set-body>  {"a": 1}\n</set-body>', { body: 'old' });
    expect(response.body.toString()).toBe('  {"a": 1}\n');
    expect(response.bodyChanged).toBe(true);
  });

  it('replaces the request body with an expression that reads it', async () => {
    const { outcome } = await inbound('<set-body>@(context.Request.Body.As<string>().ToUpper())</set-body>', {
      method: 'POST',
      body: Buffer.from('hello'),
    });
    expect(outcome.kind === 'forward' && outcome.request.body?.toString()).toBe('HELLO');
    expect(outcome.kind === 'forward' && outcome.request.bodyChanged).toBe(true);
  });

  it('takes an XML body written as markup', async () => {
    const { response } = await outbound('<set-body><a x="1"><b>t</b></a></set-body>');
    expect(response.body.toString()).toBe('<a x="1"><b>t</b></a>');
  });

  it('renders a Liquid template with body and context (C# mode filter names)', async () => {
    const { response } = await outbound(
      '<set-body template="liquid">{"name":"{{body.name | Upcase}}","m":"{{context.Request.Method}}","h":"{{context.Request.Headers["X-A"]}}"}</set-body>',
      { headers: [['Content-Type', 'application/json']], body: '{"name":"ada"}' },
      { headers: [['X-A', 'v']] },
    );
    expect(JSON.parse(response.body.toString())).toEqual({ name: 'ADA', m: 'GET', h: 'v' });
  });

  it('does not bind body for a non-JSON message', async () => {
    const { response } = await outbound('<set-body template="liquid">[{{body.name}}]</set-body>', {
      headers: [['Content-Type', 'text/plain']],
      body: '{"name":"ada"}',
    });
    expect(response.body.toString()).toBe('[]');
  });

  it('rejects a broken Liquid template at load time', () => {
    expect(diagnosticsOf('<set-body template="liquid">{% if %}</set-body>', 'outbound')[0]).toMatch(
      /^policies\/outbound\/set-body\[1\]: invalid Liquid template: /,
    );
  });

  it('needs the response body phase only when it changes the section message', async () => {
    const { run } = await outbound('<set-body>x</set-body>');
    expect(run.run.responseBodyChanged).toBe(true);
  });
});

describe('set-body Liquid sandbox', () => {
  it('reads no files through include', async () => {
    const { response } = await outbound(
      '<set-body template="liquid">[{% include "package.json" %}]</set-body>',
    );
    expect(response.status).toBe(500);
  });

  it('does not reach prototypes', async () => {
    const { response } = await outbound(
      '<set-body template="liquid">[{{ context.constructor }}{{ context.__proto__ }}{{ body.constructor.name }}]</set-body>',
      { headers: [['Content-Type', 'application/json']], body: '{}' },
    );
    expect(response.body.toString()).toBe('[]');
  });
});
