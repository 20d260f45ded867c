import type Router from '@koa/router';
import type { Context } from 'koa';
import type { z } from 'zod';
import { type ConfigDocument, type ConfigPath, entityTag, isRecord } from './config-document.js';
import { ManagementError, notFound } from './errors.js';
import { checkPreconditions, type ManagementApi, type ManagementResource, validate } from './resource.js';

type Params = Record<string, string>;
type Entry = Record<string, unknown>;

/**
 * A collection of configuration entries managed with the usual verbs — `GET` the list, and `GET`, `PUT` (create
 * or replace), `PATCH` (JSON merge patch, RFC 7396) and `DELETE` one entry — each entry in the shape the
 * configuration file gives it. Reads carry an ETag; `If-Match` and `If-None-Match: *` make writes conditional.
 */
export interface Collection {
  readonly name: string;
  /** Route of the list, e.g. `/apis/:apiId/operations`; an entry is at `<route>/:<idParam>`. */
  readonly route: string;
  readonly idParam: string;
  /** What one entry is called in messages, e.g. `operation`. */
  readonly noun: string;
  /** Where the entries are: a list of objects with ids, or a map by name. Throws 404 when a parent is missing. */
  readonly shape: 'list' | 'map';
  locate(document: ConfigDocument, params: Params): ConfigPath;
  /** The body of a PUT (and a patched entry), as the configuration writes an entry, without its id. */
  readonly schema: z.ZodType;
  /** The id of a list entry (default: its `id`). */
  idOf?(entry: Entry): string | undefined;
  /** The stored form of a validated body (map collections may store a shorter form); `previous` when replacing. */
  store?(body: Entry, previous: unknown): unknown;
  /** A stored entry as the object a patch applies to (default: the entry without its id). */
  editable?(stored: unknown): Entry;
  /** What a reader sees of a stored entry (secrets left out), with its id. */
  present?(stored: unknown, id: string): Entry;
  /** Before an entry is deleted: refuse (throw 409) or remove what refers to it. */
  beforeDelete?(document: ConfigDocument, id: string, ctx: Context): void;
  /** Further routes on one entry (e.g. `POST …/:id/listSecrets`), given how to find it. */
  extend?(router: Router, api: ManagementApi, find: EntryFinder): void;
}

export interface FoundEntry {
  readonly at: ConfigPath;
  /** The stored value (an object for list entries). */
  readonly stored: unknown;
  readonly id: string;
}

export type EntryFinder = (document: ConfigDocument, params: Params) => FoundEntry | undefined;

export function collectionResource(collection: Collection): ManagementResource {
  const idOf = (entry: Entry) =>
    collection.idOf?.(entry) ?? (typeof entry.id === 'string' ? entry.id : undefined);
  const present = (stored: unknown, id: string): Entry =>
    collection.present?.(stored, id) ?? (isRecord(stored) ? { id, ...stored } : { id, value: stored });

  const all = (document: ConfigDocument, params: Params): FoundEntry[] => {
    const at = collection.locate(document, params);
    if (collection.shape === 'map') {
      return document.entries(at).map(([id, stored]) => ({ at: [...at, id], stored, id }));
    }
    return document
      .list(at)
      .map((stored, index) => ({ at: [...at, index], stored, id: idOf(stored) ?? String(index) }));
  };
  const find: EntryFinder = (document, params) => {
    const id = params[collection.idParam]!;
    return all(document, params).find((entry) => entry.id === id);
  };
  const mustFind = (document: ConfigDocument, params: Params): FoundEntry => {
    const found = find(document, params);
    if (!found) throw notFound(`${collection.noun} "${params[collection.idParam]}"`);
    return found;
  };

  return {
    name: collection.name,
    register(router, api) {
      const item = `${collection.route}/:${collection.idParam}`;

      router.get(collection.route, (ctx) => {
        const { document } = api.read();
        const value = all(document, ctx.params).map((entry) => present(entry.stored, entry.id));
        ctx.body = { value, count: value.length };
      });

      router.get(item, (ctx) => {
        const { document } = api.read();
        const found = mustFind(document, ctx.params);
        respond(ctx, 200, present(found.stored, found.id), version(found.stored, found.id));
      });

      router.put(item, async (ctx) => {
        const id = ctx.params[collection.idParam]!;
        const { raw } = await api.readJson(ctx, collection.schema);
        if (raw.id !== undefined && raw.id !== id) {
          throw new ManagementError(
            400,
            'ValidationError',
            `the body's id "${String(raw.id)}" is not the URL's "${id}"`,
          );
        }
        const { id: _ignored, ...body } = raw;
        const result = await api.change(ctx, (document) => {
          const found = find(document, ctx.params);
          checkPreconditions(ctx, found && version(found.stored, found.id));
          const stored = collection.store?.(body, found?.stored) ?? body;
          write(document, ctx.params, found, id, stored);
          return { created: !found, entry: present(stored, id), version: version(stored, id) };
        });
        if (result.created) ctx.set('Location', ctx.path);
        respond(ctx, result.created ? 201 : 200, result.entry, result.version);
      });

      router.patch(item, async (ctx) => {
        const id = ctx.params[collection.idParam]!;
        const { raw } = await api.readJson(ctx, anyObject);
        if (raw.id !== undefined && raw.id !== id) {
          throw new ManagementError(
            400,
            'ValidationError',
            'the id of an entry cannot be changed; create a new one',
          );
        }
        const result = await api.change(ctx, (document) => {
          const found = mustFind(document, ctx.params);
          checkPreconditions(ctx, version(found.stored, found.id));
          const current =
            collection.editable?.(found.stored) ?? (isRecord(found.stored) ? withoutId(found.stored) : {});
          const merged = mergePatch(current, raw) as Entry;
          validate(collection.schema, JSON.stringify(merged, null, 2), 'patched entry');
          const stored = collection.store?.(merged, found.stored) ?? merged;
          write(document, ctx.params, found, id, stored);
          return { entry: present(stored, id), version: version(stored, id) };
        });
        respond(ctx, 200, result.entry, result.version);
      });

      router.delete(item, async (ctx) => {
        await api.change(ctx, (document) => {
          const found = mustFind(document, ctx.params);
          checkPreconditions(ctx, version(found.stored, found.id));
          collection.beforeDelete?.(document, found.id, ctx);
          // Cascades may have moved the entry (a list entry removed before it): find it again.
          const again = mustFind(document, ctx.params);
          if (collection.shape === 'map') document.delete(again.at);
          else document.deleteListEntry(again.at.slice(0, -1), again.at.at(-1) as number);
        });
        ctx.status = 204;
      });

      collection.extend?.(router, api, find);
    },
  };

  function write(
    document: ConfigDocument,
    params: Params,
    found: FoundEntry | undefined,
    id: string,
    stored: unknown,
  ): void {
    if (collection.shape === 'map') {
      document.set(found?.at ?? [...collection.locate(document, params), id], stored);
      return;
    }
    const at = collection.locate(document, params);
    const index = found ? (found.at.at(-1) as number) : Number.MAX_SAFE_INTEGER;
    // An id the entry implies (an operation's `METHOD /template`) is not written: the file stays as the operator
    // wrote it, and the entry keeps the id the gateway gives it.
    const entry = stored as Entry;
    document.setListEntry(at, index, idOf(withoutId(entry)) === id ? withoutId(entry) : { id, ...entry });
  }
}

const anyObject = {
  safeParse: (value: unknown) =>
    isRecord(value)
      ? { success: true, data: value }
      : {
          success: false,
          error: { issues: [{ code: 'custom', path: [], message: 'must be a JSON object' }] },
        },
} as unknown as z.ZodType<Entry>;

/**
 * What an entry's ETag is computed from: all of it as stored, secrets included, so regenerating a key or changing a
 * secret value is a new version even though a read shows the same thing. (A digest: the tag reveals nothing.)
 */
function version(stored: unknown, id: string): unknown {
  return { id, stored: isRecord(stored) ? withoutId(stored) : stored };
}

/** Answers with an entry; its ETag is that of `tagged` (the stored version, when a read shows less of it). */
export function respond(ctx: Context, status: number, entry: unknown, tagged: unknown = entry): void {
  ctx.status = status;
  ctx.set('ETag', entityTag(tagged));
  ctx.body = entry;
}

/** RFC 7396 JSON merge patch: objects merge key by key, `null` removes a key, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const result: Entry = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    // Defined, not assigned: a `__proto__` key in the JSON stays an (unknown, refused) key, never the prototype.
    else
      Object.defineProperty(result, key, {
        value: mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return result;
}

function withoutId(entry: Entry): Entry {
  const { id: _id, ...rest } = entry;
  return rest;
}
