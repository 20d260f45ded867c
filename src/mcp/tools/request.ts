import { isDotSegment, normalizeRequestPath } from '../../catalog/request-path.js';
import type { ToolCallRequest } from '../types.js';
import type { ArgumentBinding } from './schema.js';

function scalar(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function encodeTemplateValue(value: string, wildcard: boolean): string {
  // A `{*rest}` variable spans segments: keep its slashes, encode each segment.
  return wildcard ? value.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(value);
}

/**
 * Path parameter values that would take the call out of its operation, as validation problems. The gateway
 * normalises every path before it picks the operation (src/catalog/request-path.ts), so a value must not hold
 * what normalisation resolves: `id=".."` on `/api/Course/{id}` would be `/api`, a wildcard
 * `rest="../../guarded/api/Course"` another operation, and `x=""` on `/a/{x}/b` (merged to `/a/b`) another one.
 * A value is one segment (its "/" travel encoded, and a dot-segment beside an encoded slash is refused by the
 * gateway too); a wildcard's value may span segments, none of them a dot-segment.
 */
export function pathParameterProblems(
  urlTemplate: string,
  bindings: readonly ArgumentBinding[],
  args: Readonly<Record<string, unknown>>,
): string[] {
  const problems: string[] = [];
  // `/search?q={q}` binds q in the query: only the variables of the path part are path segments.
  const pathPart = urlTemplate.split('?')[0]!;
  for (const binding of bindings) {
    const value = args[binding.argument];
    if (binding.location !== 'template' || value === undefined) continue;
    if (!pathPart.includes(`{${binding.name}}`) && !pathPart.includes(`{*${binding.name}}`)) continue;
    const text = scalar(value);
    if (!binding.wildcard && text === '') {
      problems.push(`argument ${binding.argument}: a path parameter may not be empty`);
    } else if (text.split(/[/\\]/).some(isDotSegment)) {
      problems.push(
        `argument ${binding.argument}: ${JSON.stringify(text)} would leave the operation's path ` +
          `(a path parameter may not be or contain the segments "." or "..")`,
      );
    }
  }
  if (problems.length > 0) return problems;
  // Whatever else normalisation would change (a template of its own, merged slashes) also changes the operation.
  const { path } = buildToolCallRequest(urlTemplate, bindings, args);
  const pathOnly = path.split('?')[0]!;
  const normalized = normalizeRequestPath(pathOnly);
  if (!normalized.ok) {
    problems.push(
      `arguments: the gateway would refuse the path ${JSON.stringify(pathOnly)}: ${normalized.message}`,
    );
  } else if (normalized.path !== pathOnly) {
    problems.push(
      `arguments: the gateway would resolve the path ${JSON.stringify(pathOnly)} to ` +
        `${JSON.stringify(normalized.path)}, which may not be ${urlTemplate} (no empty or dot-segments)`,
    );
  }
  return problems;
}

/** Places validated arguments into the HTTP request the operation describes. */
export function buildToolCallRequest(
  urlTemplate: string,
  bindings: readonly ArgumentBinding[],
  args: Readonly<Record<string, unknown>>,
): ToolCallRequest {
  const templateParameters: Record<string, string> = {};
  const query: Record<string, string | string[]> = {};
  const headers: Record<string, string> = {};
  const wildcard = new Map<string, boolean>();
  let body: unknown;
  let hasBody = false;

  for (const binding of bindings) {
    const value = args[binding.argument];
    if (value === undefined) continue;
    switch (binding.location) {
      case 'template':
        templateParameters[binding.name] = scalar(value);
        wildcard.set(binding.name, binding.wildcard);
        break;
      case 'query':
        query[binding.name] = Array.isArray(value) ? value.map(scalar) : scalar(value);
        break;
      case 'header':
        headers[binding.name] = scalar(value);
        break;
      case 'body':
        body = value;
        hasBody = true;
        break;
    }
  }

  let path = urlTemplate.replace(/\{\*?([^{}]+)\}/g, (_whole, name: string) =>
    encodeTemplateValue(templateParameters[name] ?? '', wildcard.get(name) ?? false),
  );
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) search.append(key, v);
  }
  const qs = search.toString();
  if (qs) path += (path.includes('?') ? '&' : '?') + qs;

  return hasBody
    ? { path, templateParameters, query, headers, body }
    : { path, templateParameters, query, headers };
}
