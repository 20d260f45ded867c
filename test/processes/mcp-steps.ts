import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { until } from './wait.js';

/**
 * Calls an upstream "steps" tool through the gateway with three steps — each sends a progress notification under
 * the client's own token and an `info` log line from logger `steps`, and the tool holds after the first until
 * `release` is called — and checks that the first step's notifications reached `client` while the tool still held
 * (streamed, not buffered), then every step's, in order, and the result `3 steps`. Sets the client's level to info.
 */
export async function expectStepsStreamed(client: Client, tool: string, release: () => void): Promise<void> {
  await client.setLoggingLevel('info');
  const logs: unknown[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push(notification.params);
  });
  const progress: Progress[] = [];
  const pending = client.callTool({ name: tool, arguments: { steps: 3 } }, undefined, {
    onprogress: (update) => progress.push(update),
  });
  await until(() => progress.length === 1 && logs.length === 1, "the first step's progress and log", 10_000);
  release();
  const result = (await pending) as { content: { text: string }[] };
  expect(result.content[0]!.text).toBe('3 steps');
  expect(progress).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })));
  expect(logs).toEqual(
    [1, 2, 3].map((step) => ({ level: 'info', logger: 'steps', data: `step ${step} done` })),
  );
}
