import { z } from 'zod';
import { collectionResource, respond } from '../collection.js';
import { isRecord } from '../config-document.js';
import { ManagementError, notFound } from '../errors.js';

const namedValueBody = z
  .object({
    id: z.string().optional(),
    /** Required when creating; a replacement without it keeps the value (so a secret can change flags unseen). */
    value: z.string().optional(),
    secret: z.boolean().optional(),
  })
  .strict();

/** The stored form, `value` or `{ value, secret }`, as one shape. */
function normalise(stored: unknown): { value?: string; secret: boolean } {
  if (typeof stored === 'string') return { value: stored, secret: false };
  if (isRecord(stored)) {
    return {
      ...(typeof stored.value === 'string' ? { value: stored.value } : {}),
      secret: stored.secret === true,
    };
  }
  return { secret: false };
}

/**
 * `/namedValues/{name}`: the `{{name}}` values policies use. A secret value is never shown by a read (nor in any
 * error or log); `POST …/listValue` shows it, as in API Management.
 */
export const namedValues = collectionResource({
  name: 'namedValues',
  route: '/namedValues',
  idParam: 'namedValueId',
  noun: 'named value',
  shape: 'map',
  locate: () => ['namedValues'],
  schema: namedValueBody,
  editable: (stored) => normalise(stored),
  store(body, previous) {
    const value = typeof body.value === 'string' ? body.value : normalise(previous).value;
    if (value === undefined) {
      throw new ManagementError(400, 'ValidationError', 'the request body is invalid', [
        'value: is required',
      ]);
    }
    const secret = typeof body.secret === 'boolean' ? body.secret : normalise(previous).secret;
    return secret ? { value, secret: true } : value;
  },
  present(stored, id) {
    const { value, secret } = normalise(stored);
    return secret ? { id, secret } : { id, value, secret };
  },
  extend(router, api, find) {
    router.post('/namedValues/:namedValueId/listValue', (ctx) => {
      const found = find(api.read().document, ctx.params);
      if (!found) throw notFound(`named value "${ctx.params.namedValueId}"`);
      ctx.set('Cache-Control', 'no-store');
      respond(ctx, 200, { value: normalise(found.stored).value });
    });
  },
});
