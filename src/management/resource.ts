import type Router from '@koa/router';
import type { Context } from 'koa';
import type { z } from 'zod';
import { readBoundedBody } from '../bounded-body.js';
import { ConfigError } from '../config/config-error.js';
import { parseYamlWith } from '../config/load.js';
import { formatDiagnostic } from '../diagnostic.js';
import { type ConfigDocument, entityTag } from './config-document.js';
import { ManagementError } from './errors.js';
import type { RunningConfiguration } from './store.js';

/**
 * One kind of thing the management API manages (APIs, products, named values…): one file in `resources/`, listed
 * in `resources/index.ts`. It adds its routes to the router and reaches the configuration only through `api`.
 */
export interface ManagementResource {
  /** The collection's name in URLs and in the index, e.g. `apis`. */
  readonly name: string;
  register(router: Router, api: ManagementApi): void;
}

export interface ManagementApi {
  /** The running configuration as an editable document (changes to it go nowhere until `change`). */
  read(): { readonly document: ConfigDocument; readonly running: RunningConfiguration };
  /**
   * Edits the running configuration and applies it: `edit` changes the document (throwing a ManagementError
   * refuses the request), then the whole configuration is validated, written and running before this resolves.
   * Changes run one at a time, each on the configuration the previous one left. A change that restarts Envoy
   * resolves once it is validated and written, and the request is answered 202 with where to follow it.
   */
  change<T>(ctx: Context, edit: (document: ConfigDocument) => T | Promise<T>): Promise<T>;
  /** The request body: a JSON object checked against `schema`; errors name the body's line and column. */
  readJson<S extends z.ZodType>(
    ctx: Context,
    schema: S,
  ): Promise<{ raw: Record<string, unknown>; value: z.output<S> }>;
  /** The request body as text, of one of the media types given. */
  readText(ctx: Context, mediaTypes: readonly string[]): Promise<string>;
}

/** The largest body accepted: a whole configuration with its policies inline fits well within it. */
export const maxBodyBytes = 4 * 1024 * 1024;

export const jsonMediaTypes = ['application/json'] as const;
/** API Management's own media type for raw policy XML, and the usual XML ones. */
export const xmlMediaTypes = [
  'application/vnd.ms-azure-apim.policy.raw+xml',
  'application/xml',
  'text/xml',
] as const;

export async function readBody(ctx: Context, mediaTypes: readonly string[]): Promise<string> {
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
  if (!mediaTypes.includes(type)) {
    throw new ManagementError(
      415,
      'UnsupportedMediaType',
      `the body must be ${mediaTypes.join(' or ')}${type ? `, got ${type}` : ' (no Content-Type was sent)'}`,
    );
  }
  const body = await readBoundedBody(ctx.req, maxBodyBytes);
  if (!body) throw tooLarge();
  return body.toString('utf8');
}

function tooLarge(): ManagementError {
  return new ManagementError(413, 'PayloadTooLarge', `the body is larger than ${maxBodyBytes} bytes`);
}

/** Validates a value (a body, or a stored entry merged with a patch) against a schema; 400 with every problem. */
export function validate<S extends z.ZodType>(schema: S, text: string, label: string): z.output<S> {
  try {
    return parseYamlWith(schema, text, label);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ManagementError(
      400,
      'ValidationError',
      `the ${label} is invalid`,
      error.problems.map(formatDiagnostic),
    );
  }
}

/**
 * `If-Match` (the resource must exist and, unless `*`, be the version named) and `If-None-Match: *` (it must not
 * exist). `current`: what the resource's ETag is computed from, undefined when it does not exist; `what` names it
 * in the refusal.
 */
export function checkPreconditions(ctx: Context, current: unknown, what = 'the entry'): void {
  const ifMatch = ctx.get('if-match');
  if (ifMatch) {
    const tags = ifMatch.split(',').map((tag) => tag.trim());
    if (current === undefined || (!tags.includes('*') && !tags.includes(entityTag(current)))) {
      throw new ManagementError(
        412,
        'PreconditionFailed',
        current === undefined
          ? `If-Match: ${what} does not exist`
          : `If-Match: ${what} has changed since that version was read`,
      );
    }
  }
  if (ctx.get('if-none-match').trim() === '*' && current !== undefined) {
    throw new ManagementError(412, 'PreconditionFailed', `If-None-Match: *: ${what} exists already`);
  }
}
