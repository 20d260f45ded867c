import { createHash } from 'node:crypto';
import type { ApiAccess } from './catalog.js';

/**
 * Subscriptions and who owns them, and the decision API Management makes for each call: which product (if any) the
 * call belongs to, or why it is refused. Keys are looked up by their SHA-256 digest so no key is held as a map key.
 */

export interface SubscriptionInit {
  readonly id: string;
  readonly name?: string | undefined;
  readonly scope: 'all' | { readonly product: string } | { readonly api: string };
  readonly primaryKey: string;
  readonly secondaryKey?: string | undefined;
  readonly user?: string | undefined;
  readonly state: 'active' | 'suspended' | 'cancelled' | 'expired';
}

export interface UserInit {
  readonly id: string;
  readonly email?: string | undefined;
  readonly firstName?: string | undefined;
  readonly lastName?: string | undefined;
  readonly groups: readonly string[];
}

export interface ProductInit {
  readonly id: string;
  readonly name?: string | undefined;
  readonly apis: readonly string[];
  readonly subscriptionRequired: boolean;
}

/** What `context.Subscription`, `context.User` and `context.Product` show for one call. */
export interface CallIdentity {
  readonly subscription?: { id: string; name: string; key: string; primaryKey: string; secondaryKey: string };
  readonly user?: {
    id: string;
    email: string;
    firstName: string;
    lastName: string;
    groups: { id: string; name: string }[];
  };
  readonly product?: { id: string; name: string; subscriptionRequired: boolean };
}

export type AccessDecision =
  | ({ readonly kind: 'admitted'; readonly productId?: string } & CallIdentity)
  | { readonly kind: 'refused'; readonly reason: 'SubscriptionKeyNotFound' | 'SubscriptionKeyInvalid' };

/**
 * API Management's messages for the two built-in refusals (status 401), body and LastError.Message alike. The
 * missing-key text ends "…to an API." as real API Management answers it — every captured response says so
 * (microsoft/MCW-App-modernization#44, Terraform and client samples showing `curl -i` output) — while the table of
 * "Error handling in API Management policies" says "…to this API.".
 */
export const subscriptionMessages = {
  SubscriptionKeyNotFound:
    'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.',
  SubscriptionKeyInvalid:
    'Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.',
} as const;

const digest = (key: string) => createHash('sha256').update(key).digest('base64');

export class SubscriptionDirectory {
  private readonly byKeyDigest = new Map<string, SubscriptionInit>();
  private readonly users: ReadonlyMap<string, UserInit>;
  private readonly groupNames: ReadonlyMap<string, string>;
  private readonly products: ReadonlyMap<string, ProductInit>;

  constructor(init: {
    subscriptions: readonly SubscriptionInit[];
    users: readonly UserInit[];
    groups: readonly { id: string; name?: string | undefined }[];
    products: readonly ProductInit[];
  }) {
    for (const subscription of init.subscriptions) {
      this.byKeyDigest.set(digest(subscription.primaryKey), subscription);
      if (subscription.secondaryKey) this.byKeyDigest.set(digest(subscription.secondaryKey), subscription);
    }
    this.users = new Map(init.users.map((user) => [user.id, user]));
    this.groupNames = new Map(init.groups.map((group) => [group.id, group.name ?? group.id]));
    this.products = new Map(init.products.map((product) => [product.id, product]));
  }

  /** The decision for a call to `api` carrying `key` (undefined: no key was sent). */
  decide(api: { id: string; access: ApiAccess }, key: string | undefined): AccessDecision {
    if (key === undefined || key === '') {
      const open = api.access.openProductId;
      if (open) return { kind: 'admitted', productId: open, product: this.productIdentity(open) };
      if (!api.access.subscriptionRequired) return { kind: 'admitted' };
      return { kind: 'refused', reason: 'SubscriptionKeyNotFound' };
    }
    const subscription = this.byKeyDigest.get(digest(key));
    if (subscription?.state !== 'active') return { kind: 'refused', reason: 'SubscriptionKeyInvalid' };
    const identity = {
      subscription: this.subscriptionIdentity(subscription, key),
      ...this.userIdentity(subscription),
    };
    const scope = subscription.scope;
    if (scope === 'all') return { kind: 'admitted', ...identity };
    if ('api' in scope) {
      return scope.api === api.id
        ? { kind: 'admitted', ...identity }
        : { kind: 'refused', reason: 'SubscriptionKeyInvalid' };
    }
    const product = this.products.get(scope.product);
    if (!product?.apis.includes(api.id)) return { kind: 'refused', reason: 'SubscriptionKeyInvalid' };
    return {
      kind: 'admitted',
      productId: product.id,
      product: this.productIdentity(product.id),
      ...identity,
    };
  }

  private subscriptionIdentity(subscription: SubscriptionInit, key: string) {
    return {
      id: subscription.id,
      name: subscription.name ?? subscription.id,
      key,
      primaryKey: subscription.primaryKey,
      secondaryKey: subscription.secondaryKey ?? '',
    };
  }

  private userIdentity(subscription: SubscriptionInit): Pick<CallIdentity, 'user'> {
    const user = subscription.user === undefined ? undefined : this.users.get(subscription.user);
    if (!user) return {};
    return {
      user: {
        id: user.id,
        email: user.email ?? '',
        firstName: user.firstName ?? '',
        lastName: user.lastName ?? '',
        groups: user.groups.map((id) => ({ id, name: this.groupNames.get(id) ?? id })),
      },
    };
  }

  private productIdentity(id: string) {
    const product = this.products.get(id);
    return { id, name: product?.name ?? id, subscriptionRequired: product?.subscriptionRequired ?? true };
  }
}
