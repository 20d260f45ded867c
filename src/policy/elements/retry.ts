import { defineElement } from '../element.js';
import { sequence } from '../node.js';
import { ALL_SCOPES, ALL_SECTIONS, bool, int, POLICIES } from '../schema.js';
import { waitMs } from '../shared/retry-schedule.js';
import { allowedMs, retryBudgetMs, workBudgetMs } from '../shared/work-budget.js';

/**
 * Runs its statements once, then again while the condition holds, up to `count` retries, waiting as API
 * Management does (fixed, linear or exponential). When it wraps forward-request the backend call itself is
 * Envoy's, so the settings are recorded on the run for the transport to retry the upstream call.
 */
export const retry = defineElement({
  name: 'retry',
  summary: 'Retries its child policies while a condition holds.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    condition: bool({ required: true }),
    count: int({ required: true, min: 1, max: 50 }),
    interval: int({ required: true, min: 0 }),
    'max-interval': int({ min: 0 }),
    delta: int({ min: 0 }),
    'first-fast-retry': bool({ default: false }),
  },
  content: POLICIES,
  compile(node) {
    const condition = node.getter('condition');
    const count = node.getter('count');
    const interval = node.getter('interval');
    const maxInterval = node.getter('max-interval');
    const delta = node.getter('delta');
    const firstFast = node.getter('first-fast-retry');
    const body = sequence(node.statements);
    const attemptBudget = workBudgetMs(node.xml.children);
    const wrapsForward = node.xml.children.some((c) => c.kind === 'element' && c.name === 'forward-request');
    return async (run) => {
      if (wrapsForward) {
        const flow = await body(run);
        run.retry = {
          count: count(run),
          intervalSeconds: interval(run),
          maxIntervalSeconds: maxInterval?.(run),
          deltaSeconds: delta?.(run),
          firstFastRetry: firstFast(run),
          condition,
        };
        return flow;
      }
      const max = count(run);
      // The gateway extends its wait for a section once: for every attempt and pause, before the first.
      allowedMs(
        run.services,
        retryBudgetMs(max, attemptBudget, {
          interval: interval(run),
          maxInterval: maxInterval?.(run),
          delta: delta?.(run),
          firstFast: firstFast(run),
        }),
      );
      let flow = await body(run);
      for (let attempt = 1; attempt <= max && flow === 'next' && condition(run); attempt++) {
        const fast = attempt === 1 && firstFast(run);
        if (!fast)
          await run.services.clock.sleep(
            allowedMs(run.services, waitMs(attempt, interval(run), maxInterval?.(run), delta?.(run))),
          );
        flow = await body(run);
      }
      return flow;
    };
  },
});
