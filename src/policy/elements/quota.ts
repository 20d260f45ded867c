import { defineElement } from '../element.js';
import type { NodeSite } from '../node.js';
import type { RunContext } from '../runtime.js';
import { EMPTY, elements, int, str } from '../schema.js';
import { applyQuota } from '../shared/quota-counting.js';

const LIMIT = {
  calls: int({ min: 1, expression: false }),
  bandwidth: int({ min: 1, expression: false }),
  'renewal-period': int({ required: true, min: 0, expression: false }),
};
const TARGET = { name: str({ expression: false }), id: str({ expression: false }) };

/** quota, or one of its api and operation children: each declares LIMIT. */
interface LimitNode extends NodeSite {
  readonly name: string;
  literals(): {
    readonly calls: number | undefined;
    readonly bandwidth: number | undefined;
    readonly 'renewal-period': number;
  };
}

/**
 * A call and/or bandwidth quota per subscription at product scope, with optional quotas for one API or
 * operation. Windows are fixed and start at the subscription's start date, as in API Management; requests without
 * a subscription are not counted.
 */
export const quota = defineElement({
  name: 'quota',
  summary: 'Enforces a call and/or bandwidth quota per subscription (403 when exceeded).',
  sections: ['inbound'],
  scopes: ['product'],
  attributes: LIMIT,
  content: elements({
    name: 'api',
    attributes: { ...TARGET, ...LIMIT },
    content: elements({ name: 'operation', attributes: { ...TARGET, ...LIMIT }, content: EMPTY }),
  }),
  oncePerSection: true,
  touchesResponse: true,
  compile(node, c) {
    type Limit = {
      applies: (run: RunContext) => boolean;
      suffix: string;
      calls?: number;
      kilobytes?: number;
      period: number;
    };
    const limits: Limit[] = [];
    const add = (n: LimitNode, applies: Limit['applies'], suffix: string) => {
      const { calls, bandwidth, 'renewal-period': period } = n.literals();
      if (calls === undefined && bandwidth === undefined)
        c.error(n, 'attribute', `${n.name} needs calls or bandwidth, got neither`);
      limits.push({
        applies,
        suffix,
        ...(calls === undefined ? {} : { calls }),
        ...(bandwidth === undefined ? {} : { kilobytes: bandwidth }),
        period,
      });
    };
    add(node, () => true, '');
    for (const api of node.childrenNamed('api')) {
      const id = api.literal('id');
      const name = api.literal('name');
      const onApi = (run: RunContext) =>
        typeof id === 'string' ? run.context.api.id === id : run.context.api.name === name;
      add(api, onApi, `/api:${String(id ?? name)}`);
      for (const op of api.childrenNamed('operation')) {
        const opId = op.literal('id');
        const opName = op.literal('name');
        const onOp = (run: RunContext) =>
          typeof opId === 'string'
            ? run.context.operation.id === opId
            : run.context.operation.name === opName;
        add(op, (run) => onApi(run) && onOp(run), `/api:${String(id ?? name)}/op:${String(opId ?? opName)}`);
      }
    }
    return async (run): Promise<'next'> => {
      const subscription = run.context.subscription;
      if (subscription === null || subscription.id === '') return 'next';
      // Windows run from the subscription's start, as API Management counts them.
      const originMs = subscription.startDate?.getTime() ?? subscription.createdDate.getTime();
      for (const limit of limits) {
        if (!limit.applies(run)) continue;
        await applyQuota(
          run,
          `quota:${subscription.id}${limit.suffix}`,
          { calls: limit.calls, kilobytes: limit.kilobytes, periodSeconds: limit.period, originMs },
          undefined,
        );
      }
      return 'next';
    };
  },
});
