import { defineElement } from '../element.js';
import { ALL_SECTIONS, GPAO, str, text } from '../schema.js';

/** API Management truncates messages at 200 KB. */
const MAX_CHARS = 200 * 1024;

/**
 * Writes a message to an event stream named by logger-id through the injected EventLog (API Management sends
 * it to Azure Event Hubs). Fire and forget: a failing sink is logged and never fails the request.
 */
export const logToEventhub = defineElement({
  name: 'log-to-eventhub',
  summary: 'Writes a message to an event stream (logger-id).',
  sections: ALL_SECTIONS,
  scopes: GPAO,
  attributes: {
    'logger-id': str({ required: true, expression: false }),
    'partition-id': str({ expression: false }),
    'partition-key': str(),
  },
  content: text(true, true),
  compile(node, c) {
    if (node.has('partition-id') && node.has('partition-key')) {
      c.error(node, 'attribute', 'log-to-eventhub takes partition-id or partition-key, got both');
    }
    const loggerId = node.literal('logger-id');
    const partitionId = node.literal('partition-id');
    const partitionKey = node.getter('partition-key');
    const message = node.text();
    return (run) => {
      const text = message(run).slice(0, MAX_CHARS);
      const partition = {
        ...(typeof partitionId === 'string' ? { id: partitionId } : {}),
        ...(partitionKey === undefined ? {} : { key: partitionKey(run) }),
      };
      run.services.eventLog.append(loggerId, text, partition).catch((err: unknown) => {
        run.services.logger.warn('log-to-eventhub failed', { loggerId, error: (err as Error).message });
      });
      return 'next';
    };
  },
});
