import { defineElement } from '../element.js';
import type { Flow } from '../runtime.js';
import { ALL_SCOPES, oneOf, POLICIES } from '../schema.js';
import { allowedMs, workBudgetMs } from '../shared/work-budget.js';

const ALLOWED = new Set(['send-request', 'cache-lookup-value', 'choose']);

/** Runs its children in parallel and waits for all of them, or for the first to finish. */
export const wait = defineElement({
  name: 'wait',
  summary: 'Runs send-request / cache-lookup-value / choose children in parallel.',
  sections: ['inbound', 'backend', 'outbound'],
  scopes: ALL_SCOPES,
  attributes: { for: oneOf(['all', 'any'], { default: 'all' }) },
  content: POLICIES,
  compile(node, c) {
    for (const child of node.xml.children) {
      if (child.kind === 'element' && !ALLOWED.has(child.name)) {
        c.error(
          node,
          'children',
          `<wait> runs only send-request, cache-lookup-value and choose, got <${child.name}>`,
        );
      }
    }
    const mode = node.getter('for');
    const children = node.statements;
    // The children run at once: the gateway is asked to wait for the slowest before any starts (it extends once).
    const budget = workBudgetMs(node.xml.children, true);
    return async (run): Promise<Flow> => {
      allowedMs(run.services, budget);
      const running = children.map(async (statement) => statement(run));
      const flows = mode(run) === 'any' ? [await Promise.race(running)] : await Promise.all(running);
      return flows.includes('respond') ? 'respond' : 'next';
    };
  },
});
