import { decodeUrlPath, QueryCollection } from '../../expr/index.js';
import { defineElement } from '../element.js';
import { bool, EMPTY, GPAO, str } from '../schema.js';

/** `{name}`, or `{*name}`: a rewrite template may name a wildcard parameter as the operation's template writes it. */
const PARAM = /\{\*?([^{}*]+)\}/g;

/** The wildcard parameters of an operation's URL template (`/files/{*path}` → path): the rest of a path. */
function wildcardNames(urlTemplate: string): Set<string> {
  return new Set([...urlTemplate.split('?')[0]!.matchAll(/\{\*([^{}]+)\}/g)].map((match) => match[1]!));
}

/** Query parameter names an operation's URL template binds (`/get?a={b}` → a): those are "matched". */
function templateQueryNames(urlTemplate: string): Set<string> {
  const q = urlTemplate.indexOf('?');
  const names = new Set<string>();
  if (q < 0) return names;
  for (const part of urlTemplate.slice(q + 1).split('&')) {
    const name = part.split('=')[0];
    if (name) names.add(decodeURIComponent(name));
  }
  return names;
}

/**
 * Rewrites the path (relative to the backend base URL) and query of the request from a template whose
 * `{param}`s come from the operation's matched parameters; unmatched query parameters of the original request
 * are kept unless copy-unmatched-params is false. A parameter's value is encoded as one segment (a "/" in it
 * becomes %2F), except a wildcard's (`{*path}`): the rest of a path, whose "/"s stay segment separators (the
 * template matcher decodes it segment by segment, so a %2F the client sent inside it is a separator here too).
 */
export const rewriteUri = defineElement({
  name: 'rewrite-uri',
  summary: 'Rewrites the backend path and query from a template with {param}s.',
  sections: ['inbound'],
  scopes: GPAO,
  attributes: {
    template: str({ required: true }),
    'copy-unmatched-params': bool({ default: true }),
  },
  content: EMPTY,
  compile(node) {
    const template = node.getter('template');
    const copyUnmatched = node.getter('copy-unmatched-params');
    // What an operation's template says is read once per operation (a scope above the operation serves several),
    // not on every request.
    const byTemplate = new Map<string, { wildcards: Set<string>; queryNames: Set<string> }>();
    const namesOf = (urlTemplate: string) => {
      let names = byTemplate.get(urlTemplate);
      if (names === undefined) {
        names = { wildcards: wildcardNames(urlTemplate), queryNames: templateQueryNames(urlTemplate) };
        byTemplate.set(urlTemplate, names);
      }
      return names;
    };
    return (run) => {
      const request = run.context.request;
      const { wildcards, queryNames } = namesOf(run.context.operation.urlTemplate);
      const filled = template(run).replace(PARAM, (_, name: string) => {
        const matched = request.matchedParameters.get(name) ?? request.url.query.get(name)?.[0];
        if (matched === undefined) return '';
        return wildcards.has(name) && request.matchedParameters.has(name)
          ? matched.split('/').map(encodeURIComponent).join('/')
          : encodeURIComponent(matched);
      });
      const q = filled.indexOf('?');
      const rawPath = q < 0 ? filled : filled.slice(0, q);
      const query = new QueryCollection();
      if (q >= 0) {
        for (const [k, v] of new URLSearchParams(filled.slice(q + 1))) query.append(k, v);
      }
      if (copyUnmatched(run)) {
        for (const [name, values] of request.url.query.entries()) {
          if (!queryNames.has(name) && !query.has(name)) query.set(name, values);
        }
      }
      const path = decodeUrlPath(rawPath);
      request.url.path = path.startsWith('/') ? path : `/${path}`;
      request.url.query = query;
      return 'next';
    };
  },
});
