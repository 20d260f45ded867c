import { configId, reportUnused } from '../artifacts.js';
import { type ImportContext, informationFile, type ResourceKind } from '../context.js';
import type { SubscriptionEntry } from '../model.js';

const idPattern = /^[A-Za-z0-9_.-]+$/;
const states = new Set(['active', 'suspended', 'cancelled', 'expired']);

/** `/products/x`, `/apis/y` or `/apis` (every API), possibly at the end of a full Azure resource id. */
function scopeOf(
  context: ImportContext,
  file: string,
  scope: unknown,
): SubscriptionEntry['scope'] | undefined {
  const text = typeof scope === 'string' ? scope : '';
  const product = /\/products\/([^/]+)$/.exec(text)?.[1];
  const api = /\/apis\/([^/]+)$/.exec(text)?.[1];
  if (product !== undefined) {
    if (context.document.products.some((entry) => entry.id === product)) return { product };
    context.artifacts.skip(
      file,
      `scope ${text}: the product was not carried over; the subscription is left out`,
    );
  } else if (api !== undefined) {
    const id = context.apiIds.get(api);
    if (id !== undefined) return { api: id };
    context.artifacts.skip(file, `scope ${text}: the API was not carried over; the subscription is left out`);
  } else if (/\/apis$/.test(text)) {
    return 'all';
  } else {
    context.artifacts.skip(
      file,
      `scope ${JSON.stringify(scope ?? null)}: not a product, an API or all APIs; left out`,
    );
  }
  return undefined;
}

/** The owner, added as a user with its id only when no `users/` artifact describes it. */
function ownerOf(context: ImportContext, file: string, ownerId: unknown): string | undefined {
  if (typeof ownerId !== 'string') return undefined;
  const user = ownerId.split('/').at(-1)!;
  if (!idPattern.test(user)) {
    context.artifacts.skip(
      file,
      `ownerId ${ownerId}: not a Portcullis user id; the subscription has no owner`,
    );
    return undefined;
  }
  if (!context.document.users.some((entry) => entry.id === user)) {
    context.document.users.push({ id: user });
    context.artifacts.changed(
      file,
      `ownerId ${ownerId}: user "${user}" added with its id only (users are not extracted)`,
    );
  }
  return user;
}

/**
 * `subscriptions/<id>/subscriptionInformation.json`. The extractor never writes keys: a subscription is carried
 * over when the overrides give its keys (`properties.primaryKey`, `secondaryKey`), and otherwise listed as left out.
 */
export const subscriptions: ResourceKind = {
  name: 'subscriptions',
  importInto(context) {
    const { artifacts, document } = context;
    for (const name of artifacts.children('subscriptions')) {
      const file = `subscriptions/${name}/subscriptionInformation.json`;
      const properties = artifacts.properties(file, 'subscriptions', name);
      reportUnused(
        artifacts,
        file,
        properties,
        ['displayName', 'scope', 'ownerId', 'state', 'primaryKey', 'secondaryKey', 'allowTracing'],
        { notificationDate: 'not kept', expirationDate: 'subscriptions do not expire by date' },
      );
      if (properties.allowTracing === true) {
        artifacts.skip(file, 'allowTracing: tracing is switched on by engine.traceKey, not per subscription');
      }
      const primaryKey = typeof properties.primaryKey === 'string' ? properties.primaryKey : undefined;
      if (primaryKey === undefined || primaryKey.length < 16) {
        artifacts.skip(
          file,
          primaryKey === undefined
            ? 'no keys (the extractor never writes them): give properties.primaryKey in the overrides file, or create the subscription with the management API; left out'
            : 'primaryKey is shorter than 16 characters; left out',
        );
        continue;
      }
      const scope = scopeOf(context, file, properties.scope);
      if (scope === undefined) continue;
      const state = typeof properties.state === 'string' ? properties.state : 'active';
      if (!states.has(state)) {
        artifacts.skip(
          file,
          `state ${state}: not a state Portcullis serves (active, suspended, cancelled, expired); left out`,
        );
        continue;
      }
      const user = ownerOf(context, file, properties.ownerId);
      const secondaryKey = typeof properties.secondaryKey === 'string' ? properties.secondaryKey : undefined;
      document.subscriptions.push({
        id: configId(artifacts, file, name, idPattern),
        ...(typeof properties.displayName === 'string' ? { name: properties.displayName } : {}),
        scope,
        primaryKey,
        ...(secondaryKey !== undefined ? { secondaryKey } : {}),
        ...(user !== undefined ? { user } : {}),
        state: state as SubscriptionEntry['state'],
      });
    }
  },
  exportFrom({ config, output, secrets }) {
    for (const subscription of config.subscriptions) {
      const scope = subscription.scope;
      output.set(
        `subscriptions/${subscription.id}/subscriptionInformation.json`,
        informationFile({
          displayName: subscription.name ?? subscription.id,
          scope:
            scope === 'all'
              ? '/apis'
              : 'product' in scope
                ? `/products/${scope.product}`
                : `/apis/${scope.api}`,
          ownerId: subscription.user === undefined ? undefined : `/users/${subscription.user}`,
          state: subscription.state ?? 'active',
        }),
      );
      const list = secrets.get('subscriptions') ?? [];
      list.push({
        name: subscription.id,
        properties: {
          primaryKey: subscription.primaryKey,
          ...(subscription.secondaryKey !== undefined ? { secondaryKey: subscription.secondaryKey } : {}),
        },
      });
      secrets.set('subscriptions', list);
    }
  },
};
