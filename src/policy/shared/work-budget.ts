import type { PolicyServices } from '../services.js';
import type { XmlElement, XmlNode } from '../xml.js';
import { waitMs } from './retry-schedule.js';

/** send-request's timeout when it states none (API Management's default, 60 s), or states it as an expression. */
const sendRequestDefaultSeconds = 60;

/**
 * The longest that statements may keep a section waiting on other services, from what their elements say (a
 * send-request's timeout, a retry's count and pauses, a wait's parallel children): what a retry or a wait asks the
 * gateway to wait for before it starts (services' `deadline`), since the gateway extends its wait once per phase.
 * Run one after another unless `parallel`; an expression counts as the attribute's default (its value is not known
 * before the statement runs).
 */
export function workBudgetMs(nodes: readonly XmlNode[], parallel = false): number {
  let total = 0;
  for (const node of nodes) {
    if (node.kind !== 'element') continue;
    const ms = elementBudgetMs(node);
    total = parallel ? Math.max(total, ms) : total + ms;
  }
  return total;
}

function elementBudgetMs(element: XmlElement): number {
  switch (element.name) {
    case 'send-request':
      return (literalInt(element, 'timeout') ?? sendRequestDefaultSeconds) * 1000;
    case 'wait':
      return workBudgetMs(element.children, true);
    case 'choose':
      // One branch runs: the longest.
      return workBudgetMs(element.children, true);
    case 'retry': {
      const count = literalInt(element, 'count') ?? 1;
      const attempt = workBudgetMs(element.children);
      return retryBudgetMs(count, attempt, {
        interval: literalInt(element, 'interval') ?? 0,
        maxInterval: literalInt(element, 'max-interval'),
        delta: literalInt(element, 'delta'),
      });
    }
    default:
      return workBudgetMs(element.children);
  }
}

/** A retry's whole run: the first attempt, `count` more, and the pauses before each (none before a fast first). */
export function retryBudgetMs(
  count: number,
  attemptMs: number,
  pauses: {
    interval: number;
    maxInterval: number | undefined;
    delta: number | undefined;
    firstFast?: boolean;
  },
): number {
  let total = attemptMs;
  for (let attempt = 1; attempt <= count; attempt++) {
    const fast = attempt === 1 && pauses.firstFast === true;
    total += attemptMs + (fast ? 0 : waitMs(attempt, pauses.interval, pauses.maxInterval, pauses.delta));
  }
  return total;
}

function literalInt(element: XmlElement, name: string): number | undefined {
  const text = element.attributes.find((attribute) => attribute.name === name)?.value.trim();
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  return Number(text);
}

/**
 * How long work that may take up to `ms` may take in this run: all of it, unless the gateway in front will not
 * wait that long for the section (services' `deadline`).
 */
export function allowedMs(services: PolicyServices, ms: number): number {
  return services.deadline ? services.deadline.reserve(ms) : ms;
}
