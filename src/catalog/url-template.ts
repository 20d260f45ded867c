import { decodeSegment } from './request-path.js';

/**
 * API Management URL templates: `/api/Course/{id}`, `/files/{*path}` (the rest of the path, as `path`), `/files/*`
 * (the rest of the path, unnamed; `/*` takes every path), optionally with a query part `/search?q={q}` whose
 * parameters must be present. Compiled once into a matcher.
 */

export interface UrlTemplate {
  readonly text: string;
  /** Template parameter names in order (path then query). */
  readonly parameters: readonly string[];
  /** Higher is more specific: literal segments outrank parameters, which outrank a wildcard. */
  readonly specificity: number;
  /**
   * Matches a normalised, percent-encoded API-relative path (see request-path.ts) and its query; undefined when it
   * does not match. Only a literal "/" separates segments: an encoded one (`%2F`) is part of its segment's value.
   */
  match(path: string, query: URLSearchParams): Record<string, string> | undefined;
}

export class UrlTemplateError extends Error {
  override readonly name = 'UrlTemplateError';
}

type Segment =
  | { kind: 'literal'; text: string }
  | { kind: 'parameter'; name: string; prefix: string; suffix: string }
  /** The rest of the path; `name` is undefined for `*`, which binds no parameter. */
  | { kind: 'wildcard'; name: string | undefined };

export function compileUrlTemplate(text: string): UrlTemplate {
  const [pathPart, queryPart] = splitOnce(text, '?');
  if (!pathPart.startsWith('/'))
    throw new UrlTemplateError(`URL template must start with "/", got "${text}"`);
  const names: string[] = [];
  const segments = pathPart
    .split('/')
    .slice(1)
    .map((raw, index, all): Segment => {
      const wildcard = /^\{\*([A-Za-z_][A-Za-z0-9_-]*)\}$/.exec(raw);
      if (wildcard || raw === '*') {
        if (index !== all.length - 1)
          throw new UrlTemplateError(`"${raw}" must be the last segment of "${text}"`);
        if (wildcard) names.push(wildcard[1]!);
        return { kind: 'wildcard', name: wildcard?.[1] };
      }
      const parameter = /^([^{}]*)\{([A-Za-z_][A-Za-z0-9_-]*)\}([^{}]*)$/.exec(raw);
      if (parameter) {
        names.push(parameter[2]!);
        return { kind: 'parameter', name: parameter[2]!, prefix: parameter[1]!, suffix: parameter[3]! };
      }
      if (/[{}]/.test(raw))
        throw new UrlTemplateError(`malformed segment "${raw}" in URL template "${text}"`);
      return { kind: 'literal', text: raw.toLowerCase() };
    });
  const queryParameters: [key: string, name: string][] = [];
  for (const pair of queryPart ? queryPart.split('&') : []) {
    const match = /^([^=]+)=\{([A-Za-z_][A-Za-z0-9_-]*)\}$/.exec(pair);
    if (!match) throw new UrlTemplateError(`query part "${pair}" of "${text}" must look like key={name}`);
    queryParameters.push([match[1]!, match[2]!]);
    names.push(match[2]!);
  }
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate) throw new UrlTemplateError(`parameter "${duplicate}" appears twice in "${text}"`);

  const specificity =
    segments.reduce(
      (sum, segment) => sum + (segment.kind === 'literal' ? 100 : segment.kind === 'parameter' ? 10 : 0),
      segments.length * 1000,
    ) + queryParameters.length;

  return {
    text,
    parameters: names,
    specificity,
    match(path, query) {
      const parts = path.split('/').slice(1);
      const escaped = path.includes('%');
      const params: Record<string, string> = {};
      for (let index = 0; index < segments.length; index++) {
        const segment = segments[index]!;
        if (segment.kind === 'wildcard') {
          const rest = parts.slice(index);
          if (segment.name !== undefined)
            params[segment.name] = (escaped ? rest.map(decodeSegment) : rest).join('/');
          return matchQuery(params, query);
        }
        const encoded = parts[index];
        if (encoded === undefined) return undefined;
        // Decoded segment by segment: an encoded "/" is part of its segment, never a separator.
        const part = escaped ? decodeSegment(encoded) : encoded;
        if (segment.kind === 'literal') {
          if (part.toLowerCase() !== segment.text) return undefined;
        } else {
          if (part.length <= segment.prefix.length + segment.suffix.length) return undefined;
          if (!part.startsWith(segment.prefix) || !part.endsWith(segment.suffix)) return undefined;
          params[segment.name] = part.slice(segment.prefix.length, part.length - segment.suffix.length);
        }
      }
      // A trailing slash is the same resource; anything longer is not.
      const rest = parts.slice(segments.length);
      if (rest.length > 1 || (rest.length === 1 && rest[0] !== '')) return undefined;
      return matchQuery(params, query);
    },
  };

  function matchQuery(params: Record<string, string>, query: URLSearchParams) {
    for (const [key, name] of queryParameters) {
      const value = query.get(key);
      if (value === null) return undefined;
      params[name] = value;
    }
    return params;
  }
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const index = text.indexOf(separator);
  return index < 0 ? [text, undefined] : [text.slice(0, index), text.slice(index + 1)];
}
