/**
 * llm-emit-token-metric and azure-openai-emit-token-metric: one policy under two names. When the language-model
 * call's response is complete, it emits its prompt, completion and total tokens as three metrics ("Prompt Tokens",
 * "Completion Tokens", "Total Tokens", API Management's names) with the configured dimensions, to the injected
 * metric sink (the engine's Prometheus metrics and, when configured, its event stream). Tokens come from the
 * `usage` the backend reports; for a stream that reports none, they are estimated (as API Management does).
 */
import { defineElement } from '../element.js';
import type { Getter } from '../node.js';
import type { RunContext } from '../runtime.js';
import { ALL_SCOPES, elements, str } from '../schema.js';
import { llmCall } from './llm-exchange.js';
import { preloadTokenizers } from './prompt-tokens.js';

/** Dimensions that take their value from the request when `value` is omitted. */
const DEFAULTS: Readonly<Record<string, (run: RunContext) => string>> = {
  'API ID': (run) => run.context.api.id,
  'Operation ID': (run) => run.context.operation.id,
  'Product ID': (run) => run.context.product?.id ?? '',
  'Subscription ID': (run) => run.context.subscription?.id ?? '',
  'User ID': (run) => run.context.user?.id ?? '',
  'Client IP': (run) => run.context.request.ipAddress,
  Location: (run) => run.context.deployment.region,
  'Gateway ID': (run) => run.context.deployment.gatewayId,
};

/** API Management allows at most 5 dimensions besides its default ones. */
const MAX_CUSTOM_DIMENSIONS = 5;

export const TOKEN_METRICS = ['Prompt Tokens', 'Completion Tokens', 'Total Tokens'] as const;

/** Declares the token metric under one of its names (the element files `llm-emit-token-metric.ts`, `azure-…`). */
export function defineTokenMetric(definition: { readonly name: string; readonly summary: string }) {
  const element = definition.name;
  return defineElement({
    name: definition.name,
    summary: definition.summary,
    sections: ['inbound'],
    scopes: ALL_SCOPES,
    attributes: { namespace: str({ default: 'API Management', expression: false }) },
    content: elements({
      name: 'dimension',
      min: 1,
      attributes: { name: str({ required: true, expression: false }), value: str() },
    }),
    // The prompt is read to estimate a stream's tokens, as API Management does.
    body: 'read',
    watchesResponseBody: true,
    compile(node, c) {
      const namespace = node.literal('namespace');
      preloadTokenizers();
      const dimensions: [string, Getter<string>][] = [];
      let custom = 0;
      for (const d of node.childrenNamed('dimension')) {
        const name = d.literal('name');
        const given = d.getter('value');
        const fallback = DEFAULTS[name];
        if (fallback === undefined) custom++;
        if (given === undefined && fallback === undefined) {
          c.error(
            d,
            'attribute',
            `${element}/dimension "${name}" needs a value (only ${Object.keys(DEFAULTS).join(', ')} have defaults)`,
          );
          continue;
        }
        dimensions.push([name, given ?? fallback!]);
      }
      if (custom > MAX_CUSTOM_DIMENSIONS)
        c.error(
          node,
          'attribute',
          `${element} takes at most ${MAX_CUSTOM_DIMENSIONS} custom dimensions, got ${custom}`,
        );
      return (run) => {
        // Dimensions are evaluated on the request, as the element stands in inbound.
        const values = dimensions.map(([name, value]) => [name, value(run)] as const);
        llmCall(run).onUsage((usage) => {
          const counts = [usage.promptTokens, usage.completionTokens, usage.totalTokens];
          TOKEN_METRICS.forEach((name, index) => {
            const metric = { name, namespace, value: counts[index]!, dimensions: values };
            if (run.services.metrics === undefined)
              run.services.logger.info('llm-emit-token-metric', { metric });
            else run.services.metrics.emit(metric);
          });
        });
        return 'next';
      };
    },
  });
}
