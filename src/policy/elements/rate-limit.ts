import { defineElement } from '../element.js';
import type { RunContext } from '../runtime.js';
import { EMPTY, elements, int, str } from '../schema.js';
import { consume, REPORTING, reporting } from '../shared/rate-limiting.js';

const LIMIT = {
  calls: int({ required: true, min: 1, expression: false }),
  'renewal-period': int({ required: true, min: 1, max: 300, expression: false }),
};
const TARGET = { name: str({ expression: false }), id: str({ expression: false }) };

interface Limit {
  /** Which requests it applies to; `id` wins over `name`. */
  readonly applies: (run: RunContext) => boolean;
  readonly suffix: (run: RunContext) => string;
  readonly calls: number;
  readonly period: number;
}

/** An api or operation child: named by id or by name. */
interface TargetNode {
  literal(name: keyof typeof TARGET): string | undefined;
}

function matcher(
  node: TargetNode,
  of: (run: RunContext) => { id: string; name: string },
): (run: RunContext) => boolean {
  const id = node.literal('id');
  const name = node.literal('name');
  return (run) => {
    const target = of(run);
    return typeof id === 'string' ? target.id === id : target.name === name;
  };
}

/**
 * Limits calls per subscription in a sliding window, with optional tighter limits for one API or operation.
 * Applies only to requests made with a subscription key, as in API Management.
 */
export const rateLimit = defineElement({
  name: 'rate-limit',
  summary: 'Limits the call rate per subscription (429 when exceeded).',
  sections: ['inbound'],
  scopes: ['product', 'api', 'operation'],
  attributes: { ...LIMIT, ...REPORTING },
  content: elements({
    name: 'api',
    attributes: { ...TARGET, ...LIMIT },
    content: elements({ name: 'operation', attributes: { ...TARGET, ...LIMIT }, content: EMPTY }),
  }),
  oncePerSection: true,
  touchesResponse: true,
  compile(node, c) {
    const limits: Limit[] = [
      {
        applies: () => true,
        suffix: () => '',
        calls: node.literal('calls'),
        period: node.literal('renewal-period'),
      },
    ];
    for (const api of node.childrenNamed('api')) {
      if (!api.has('id') && !api.has('name'))
        c.error(api, 'attribute', 'rate-limit/api needs a name or an id, got neither');
      const onApi = matcher(api, (run) => run.context.api);
      const apiKey = String(api.literal('id') ?? api.literal('name'));
      limits.push({
        applies: onApi,
        suffix: () => `/api:${apiKey}`,
        calls: api.literal('calls'),
        period: api.literal('renewal-period'),
      });
      for (const op of api.childrenNamed('operation')) {
        if (!op.has('id') && !op.has('name'))
          c.error(op, 'attribute', 'rate-limit/api/operation needs a name or an id, got neither');
        const onOp = matcher(op, (run) => run.context.operation);
        const opKey = String(op.literal('id') ?? op.literal('name'));
        limits.push({
          applies: (run) => onApi(run) && onOp(run),
          suffix: () => `/api:${apiKey}/op:${opKey}`,
          calls: op.literal('calls'),
          period: op.literal('renewal-period'),
        });
      }
    }
    const report = reporting(node);
    const narrowestFirst = [...limits].reverse();
    return async (run): Promise<'next'> => {
      const subscription = run.context.subscription;
      if (subscription === null || subscription.id === '') return 'next';
      // Narrowest first: a call refused by its operation's limit does not use up the API's or the subscription's.
      for (const limit of narrowestFirst) {
        if (!limit.applies(run)) continue;
        await consume(
          run,
          report,
          `rate-limit:${subscription.id}${limit.suffix(run)}`,
          limit.calls,
          limit.period,
          1,
        );
      }
      return 'next';
    };
  },
});
