import { randomBytes } from 'node:crypto';
import { subscriptionSchema } from '../../config/schema.js';
import { collectionResource, respond } from '../collection.js';
import { isRecord } from '../config-document.js';
import { notFound } from '../errors.js';

/** 128 random bits as 32 hex digits, the shape of API Management's keys. */
const newKey = () => randomBytes(16).toString('hex');

/**
 * `/subscriptions/{sid}`: a key pair scoped to a product, an API or all APIs. As in API Management, keys are
 * generated when a subscription is created without them, kept when it is replaced without them, never shown by a
 * read — `POST …/listSecrets` shows them — and replaced by `POST …/regeneratePrimaryKey` / `regenerateSecondaryKey`.
 */
export const subscriptions = collectionResource({
  name: 'subscriptions',
  route: '/subscriptions',
  idParam: 'sid',
  noun: 'subscription',
  shape: 'list',
  locate: () => ['subscriptions'],
  schema: subscriptionSchema.partial({ id: true, primaryKey: true }),
  store(body, previous) {
    const before = isRecord(previous) ? previous : {};
    return {
      ...body,
      primaryKey: body.primaryKey ?? before.primaryKey ?? newKey(),
      secondaryKey: body.secondaryKey ?? before.secondaryKey ?? newKey(),
    };
  },
  present(stored, id) {
    const {
      primaryKey: _primary,
      secondaryKey: _secondary,
      id: _id,
      ...rest
    } = stored as Record<string, unknown>;
    return { id, ...rest };
  },
  extend(router, api, find) {
    router.post('/subscriptions/:sid/listSecrets', (ctx) => {
      const found = find(api.read().document, ctx.params);
      if (!found) throw notFound(`subscription "${ctx.params.sid}"`);
      const { primaryKey, secondaryKey } = found.stored as Record<string, unknown>;
      // Credentials: never cached by anything on the way.
      ctx.set('Cache-Control', 'no-store');
      respond(ctx, 200, { primaryKey, secondaryKey });
    });
    for (const [action, field] of [
      ['regeneratePrimaryKey', 'primaryKey'],
      ['regenerateSecondaryKey', 'secondaryKey'],
    ] as const) {
      router.post(`/subscriptions/:sid/${action}`, async (ctx) => {
        await api.change(ctx, (document) => {
          const found = find(document, ctx.params);
          if (!found) throw notFound(`subscription "${ctx.params.sid}"`);
          document.set([...found.at, field], newKey());
        });
        ctx.status = 204;
      });
    }
  },
});
