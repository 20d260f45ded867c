import type { Context } from 'koa';
import type { ConfigDocument } from '../config-document.js';
import { ManagementError } from '../errors.js';

/**
 * Subscriptions that belong to what is being deleted (an API, a product, a user). As API Management does, they
 * block the deletion unless the request says `?deleteSubscriptions=true`, which deletes them too.
 */
export function deleteOwnedSubscriptions(
  document: ConfigDocument,
  ctx: Context,
  what: string,
  owns: (subscription: Record<string, unknown>) => boolean,
): void {
  const owned = document
    .list(['subscriptions'])
    .map((subscription, index) => ({ subscription, index }))
    .filter(({ subscription }) => owns(subscription));
  if (owned.length === 0) return;
  if (ctx.query.deleteSubscriptions !== 'true') {
    throw new ManagementError(
      409,
      'Conflict',
      `${what} has ${owned.length} subscription(s) (${owned.map(({ subscription }) => String(subscription.id)).join(', ')}); delete them first or add ?deleteSubscriptions=true`,
    );
  }
  for (const { index } of owned.reverse()) document.deleteListEntry(['subscriptions'], index);
}

/** The index of the entry with this id in a list, or a 404 naming what is missing. */
export function indexOf(document: ConfigDocument, at: readonly string[], id: string, noun: string): number {
  const index = document.list(at).findIndex((entry) => entry.id === id);
  if (index < 0) throw new ManagementError(404, 'ResourceNotFound', `${noun} "${id}" not found`);
  return index;
}

export function scopeOf(subscription: Record<string, unknown>): Record<string, unknown> | undefined {
  const scope = subscription.scope;
  return typeof scope === 'object' && scope !== null ? (scope as Record<string, unknown>) : undefined;
}

/** An operation's id as the gateway names it: its `id`, or `METHOD /template` when it has none. */
export function operationId(entry: Record<string, unknown>): string {
  return typeof entry.id === 'string' ? entry.id : `${String(entry.method)} ${String(entry.urlTemplate)}`;
}
