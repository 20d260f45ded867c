import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { ChangeOutcome } from './store.js';

export type OperationStatus =
  | { readonly id: string; readonly status: 'InProgress' }
  | { readonly id: string; readonly status: 'Succeeded'; readonly generation: number }
  | {
      readonly id: string;
      readonly status: 'Failed';
      readonly error: {
        readonly code: string;
        readonly message: string;
        readonly details: readonly string[];
      };
    };

/**
 * Changes still being applied when their request is answered. A change that restarts Envoy cannot be answered
 * when it is done: the request came in through the Envoy being replaced, whose connections close once the new one
 * has taken over. Such a change is answered `202 Accepted` as soon as it is validated and written, with
 * `Location: /operations/{id}`, where its outcome can be read (API Management's long-running operations do the same).
 */
export class PendingOperations {
  private readonly operations = new LRUCache<string, OperationStatus>({ max: 200 });

  track(outcome: Promise<ChangeOutcome>): string {
    const id = randomUUID();
    this.operations.set(id, { id, status: 'InProgress' });
    void outcome.then(
      (result) =>
        this.operations.set(
          id,
          result.ok
            ? { id, status: 'Succeeded', generation: result.generation }
            : {
                id,
                status: 'Failed',
                error: { code: 'ServiceUnavailable', message: result.message, details: result.problems },
              },
        ),
      (error: unknown) =>
        this.operations.set(id, {
          id,
          status: 'Failed',
          error: { code: 'ServiceUnavailable', message: String(error), details: [] },
        }),
    );
    return id;
  }

  get(id: string): OperationStatus | undefined {
    return this.operations.get(id);
  }
}
