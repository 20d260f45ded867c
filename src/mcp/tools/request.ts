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
