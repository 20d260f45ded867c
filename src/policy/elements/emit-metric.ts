import { defineElement } from '../element.js';
import type { Getter } from '../node.js';
import type { RunContext } from '../runtime.js';
import { ALL_SCOPES, ALL_SECTIONS, elements, num, str } from '../schema.js';

/** Dimensions that take a default value from the request when `value` is omitted. */
const DEFAULTS: Readonly<Record<string, (run: RunContext) => string>> = {
  'API ID': (run) => run.context.api.id,
  'Operation ID': (run) => run.context.operation.id,
  'Product ID': (run) => run.context.product?.id ?? '',
  'User ID': (run) => run.context.user?.id ?? '',
  'Subscription ID': (run) => run.context.subscription?.id ?? '',
  Location: (run) => run.context.deployment.region,
  'Gateway ID': (run) => run.context.deployment.gatewayId,
};

/** Emits a custom metric with up to 10 dimensions to the injected metric sink. */
export const emitMetric = defineElement({
  name: 'emit-metric',
  summary: 'Emits a custom metric with dimensions.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    name: str({ required: true, expression: false }),
    namespace: str({ default: 'API Management', expression: false }),
    value: num({ default: 1 }),
  },
  content: elements({
    name: 'dimension',
    max: 10,
    attributes: { name: str({ required: true, expression: false }), value: str() },
  }),
  compile(node, c) {
    const name = node.literal('name');
    const namespace = node.literal('namespace');
    const value = node.getter('value');
    const dimensions: [string, Getter<string>][] = [];
    for (const d of node.childrenNamed('dimension')) {
      const dimension = d.literal('name');
      const given = d.getter('value');
      const fallback = DEFAULTS[dimension];
      if (given === undefined && fallback === undefined) {
        c.error(
          d,
          'attribute',
          `emit-metric/dimension "${dimension}" needs a value (only ${Object.keys(DEFAULTS).join(', ')} have defaults)`,
        );
        continue;
      }
      dimensions.push([dimension, given ?? fallback!]);
    }
    return (run) => {
      const metric = {
        name,
        namespace,
        value: value(run),
        dimensions: dimensions.map(([n, v]) => [n, v(run)] as const),
      };
      if (run.services.metrics === undefined) run.services.logger.info('emit-metric', { metric });
      else run.services.metrics.emit(metric);
      return 'next';
    };
  },
});
