/** `<base />` stitching across global → product → API → operation, as API Management does it. */
import { describe, expect, it } from 'vitest';
import { buildPipeline } from '../../../../src/policy/pipeline.js';
import { compileAt, fakeServices, policies, request, runAll } from '../../../doubles/policy-services.js';

/** A document whose inbound appends `tag` to the `order` header, with `<base />` where the marker is. */
function scope(scope: 'global' | 'product' | 'api' | 'operation', inbound: string) {
  const tag = (t: string) =>
    `<set-header name="order" exists-action="append"><value>${t}</value></set-header>`;
  const xml = policies({
    inbound: inbound.replace(/\[(\w+)\]/g, (_, t: string) => tag(t)),
    backend: scope === 'global' ? '<forward-request />' : '<base />',
  });
  return compileAt(xml, scope);
}

async function order(docs: Parameters<typeof buildPipeline>[0]): Promise<string[]> {
  const pipeline = buildPipeline(docs);
  const { run } = await runAll(pipeline, request(), fakeServices());
  return run.context.request.headers.get('order') ?? [];
}

describe('base', () => {
  it('inlines each broader scope where the narrower one puts <base />', async () => {
    const docs = {
      global: scope('global', '[g1]<base />[g2]'),
      product: scope('product', '[p1]<base />'),
      api: scope('api', '<base />[a1]'),
      operation: scope('operation', '[o1]<base />[o2]'),
    };
    expect(await order(docs)).toEqual(['o1', 'p1', 'g1', 'g2', 'a1', 'o2']);
  });

  it('does not inherit a section without <base />', async () => {
    const docs = {
      global: scope('global', '[g]'),
      api: scope('api', '[a]'),
      operation: scope('operation', '[o]'),
    };
    expect(await order(docs)).toEqual(['o']);
  });

  it('lets a scope without a document inherit everything', async () => {
    const docs = { global: scope('global', '[g]'), operation: scope('operation', '<base />[o]') };
    expect(await order(docs)).toEqual(['g', 'o']);
  });

  it('has no effect at global scope', async () => {
    expect(await order({ global: scope('global', '<base />[g]') })).toEqual(['g']);
  });

  it('uses the default global policy (forward-request) when no global document is given', async () => {
    const pipeline = buildPipeline({ operation: scope('operation', '[o]') });
    expect(pipeline.elements.backend).toEqual(['forward-request']);
    const { forwarded } = await runAll(pipeline, request(), fakeServices());
    expect(forwarded).toBe(true);
  });

  it('stitches every section independently', () => {
    const global = compileAt(
      policies({
        backend: '<forward-request />',
        outbound: '<set-status code="201" />',
        'on-error': '<set-status code="503" />',
      }),
      'global',
    );
    const operation = compileAt(
      policies({ outbound: '<set-header name="x"><value>1</value></set-header><base />', 'on-error': '' }),
    );
    const pipeline = buildPipeline({ global, operation });
    expect(pipeline.elements.outbound).toEqual(['set-header', 'set-status']);
    expect(pipeline.elements['on-error']).toEqual([]);
  });

  it('refuses a document compiled for another scope', () => {
    expect(() => buildPipeline({ api: compileAt(policies({}), 'operation') })).toThrow(
      'the api document was compiled for operation scope',
    );
  });

  it('derives the phases a pipeline needs from its elements and expressions', () => {
    const none = buildPipeline({
      operation: compileAt(policies({ inbound: '<set-header name="a"><value>1</value></set-header>' })),
    });
    expect(none.needs).toEqual({
      requestBody: false,
      responseHeaders: false,
      responseBody: false,
      responseStream: false,
    });
    const reads = buildPipeline({
      operation: compileAt(
        policies({
          inbound:
            '<set-variable name="b" value="@(context.Request.Body.As<string>(preserveContent: true))" />',
        }),
      ),
    });
    expect(reads.needs).toEqual({
      requestBody: true,
      responseHeaders: false,
      responseBody: false,
      responseStream: false,
    });
    const outbound = buildPipeline({
      operation: compileAt(policies({ outbound: '<set-status code="200" />' })),
    });
    expect(outbound.needs).toEqual({
      requestBody: false,
      responseHeaders: true,
      responseBody: false,
      responseStream: false,
    });
    const body = buildPipeline({ operation: compileAt(policies({ outbound: '<set-body>x</set-body>' })) });
    expect(body.needs).toEqual({
      requestBody: false,
      responseHeaders: true,
      responseBody: true,
      responseStream: false,
    });
    const watched = buildPipeline({
      operation: compileAt(
        policies({ inbound: '<llm-token-limit counter-key="k" tokens-per-minute="10" />' }),
      ),
    });
    // The prompt is read; the answer is watched as it passes, never buffered for outbound.
    expect(watched.needs).toEqual({
      requestBody: true,
      responseHeaders: true,
      responseBody: false,
      responseStream: true,
    });
    const built = buildPipeline({
      operation: compileAt(
        policies({ inbound: '<return-response><set-body>x</set-body></return-response>' }),
      ),
    });
    expect(built.needs.requestBody).toBe(false);
  });
});
