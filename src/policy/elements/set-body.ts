import { Drop, type Template } from 'liquidjs';
import { type PolicyContext, toDotNetString } from '../../expr/index.js';
import { defineElement } from '../element.js';
import { bodyText, messageOf, replaceBody } from '../message.js';
import type { RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, oneOf } from '../schema.js';
import { liquidEngine } from '../shared/liquid-engine.js';
import { XML_TYPE, xmlForLiquid } from '../shared/liquid-xml.js';

/**
 * Header names are case-insensitive in API Management, and Envoy hands them over lower-cased: a template's
 * `context.Request.Headers.Content-Type` must find `content-type`.
 */
class HeadersDrop extends Drop {
  readonly #values = new Map<string, string>();

  constructor(entries: Iterable<[string, string[]]>) {
    super();
    for (const [name, values] of entries) this.#values.set(name.toLowerCase(), values.join(','));
  }

  override liquidMethodMissing(key: unknown): string | undefined {
    return typeof key === 'string' ? this.#values.get(key.toLowerCase()) : undefined;
  }
}

const JSON_TYPE = /^(application|text)\/([\w.+-]*\+)?json\b/i;

/** The object a Liquid template sees as `context` (a plain snapshot, PascalCase as in API Management). */
function liquidContext(ctx: PolicyContext): Record<string, unknown> {
  const headers = (h: { entries(): Iterable<[string, string[]]> }): HeadersDrop =>
    new HeadersDrop(h.entries());
  const url = (u: PolicyContext['request']['url']) => ({
    Scheme: u.scheme,
    Host: u.host,
    Port: u.port,
    Path: u.path,
    QueryString: u.queryString,
    Query: Object.fromEntries([...u.query.entries()].map(([k, v]) => [k, v.join(',')])),
    ToString: u.toString(),
  });
  const variables: Record<string, unknown> = {};
  for (const [k, v] of ctx.variables.entries()) variables[k] = toLiquidValue(v);
  return {
    Request: {
      Method: ctx.request.method,
      Url: url(ctx.request.backendUrl),
      OriginalUrl: url(ctx.request.originalUrl),
      IpAddress: ctx.request.ipAddress,
      Headers: headers(ctx.request.headers),
      MatchedParameters: Object.fromEntries(ctx.request.matchedParameters),
      HasBody: ctx.request.body !== null,
    },
    Response:
      ctx.response === null
        ? {}
        : { StatusCode: ctx.response.statusCode, Headers: headers(ctx.response.headers) },
    Variables: variables,
    Api: { Id: ctx.api.id, Name: ctx.api.name, Path: ctx.api.path },
    Operation: { Id: ctx.operation.id, Name: ctx.operation.name, Method: ctx.operation.method },
    RequestId: toDotNetString(ctx.requestId),
  };
}

function toLiquidValue(v: unknown): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  // JObject/JArray and other runtime values: go through their JSON text so Liquid sees plain data.
  const text = toDotNetString(v);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Replaces the body with a literal, an expression's value or a rendered Liquid template (C# mode, see
 * shared/liquid-engine.ts): templates are parsed once at load time; rendering is synchronous, with no file system.
 */
export const setBody = defineElement({
  name: 'set-body',
  summary: 'Replaces the message body (literal, expression or Liquid template).',
  // The reference lists inbound/backend/outbound; real policies also use it in on-error (the overview allows it).
  sections: ['inbound', 'backend', 'outbound', 'on-error'],
  scopes: ALL_SCOPES,
  attributes: {
    template: oneOf(['liquid', 'none'], { expression: false }),
    'xsi-nil': oneOf(['blank', 'null'], { default: 'blank', expression: false }),
    'parse-date': bool({ default: true, expression: false }),
  },
  content: { kind: 'text', expression: true, preserveWhitespace: true, markup: true },
  body: 'write',
  compile(node, c) {
    const target = c.target;
    if (node.literal('template') === 'liquid') {
      if (node.content?.kind === 'expression') {
        c.error(node, 'children', 'set-body with template="liquid" takes a template, got an expression');
        return () => 'next';
      }
      const source = node.content === undefined ? '' : String(node.content.value);
      let template: Template[];
      try {
        template = liquidEngine().parse(source);
      } catch (err) {
        c.error(node, 'children', `invalid Liquid template: ${(err as Error).message.split('\n')[0]}`);
        return () => 'next';
      }
      const nil = node.literal('xsi-nil') === 'null' ? 'null' : 'blank';
      return (run) => {
        replaceBody(
          run,
          target,
          liquidEngine().renderSync(template, liquidScope(run, target, nil)) as string,
        );
        return 'next';
      };
    }
    const value = node.text() ?? (() => '');
    return (run) => {
      replaceBody(run, target, value(run));
      return 'next';
    };
  },
});

function liquidScope(
  run: RunContext,
  target: Parameters<typeof messageOf>[1],
  nil: 'blank' | 'null',
): Record<string, unknown> {
  const scope: Record<string, unknown> = { context: liquidContext(run.context) };
  // `body` is bound for JSON and XML content types only, as the set-body page says.
  const message = messageOf(run, target === 'pending-response' ? 'request' : target);
  const type = message.headers.getJoined('Content-Type') ?? '';
  if (JSON_TYPE.test(type)) {
    try {
      scope.body = JSON.parse(bodyText(message));
    } catch {
      scope.body = undefined;
    }
  } else if (XML_TYPE.test(type)) {
    scope.body = xmlForLiquid(bodyText(message), nil);
  }
  return scope;
}
