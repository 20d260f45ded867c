/**
 * The one normal form of a request path, computed before anything looks at it: the engine matches the API and the
 * operation on it and forwards exactly it, so the backend resolves the path the policy was chosen for. Envoy's
 * HttpConnectionManager does the same (normalize_path, merge_slashes; see envoy/bootstrap/connection-manager.ts);
 * the engine does it again because it may run behind an Envoy configured by someone else.
 *
 * Steps, on the percent-encoded path (the query is not part of it):
 * 1. every `%` starts a two-hex-digit escape (else: refused);
 * 2. escapes of unreserved characters are decoded (RFC 3986 §6.2.2.2), so `%2e` and `%2E` are dots;
 * 3. `\` is a `/` (as Envoy and WHATWG URL parsers treat it), and runs of `/` are one (merge_slashes);
 * 4. dot-segments are removed (RFC 3986 §5.2.4 remove_dot_segments), never climbing above the root;
 * 5. a segment that an encoded slash (`%2F`, `%5C`) splits around a dot-segment (`..%2F`, `%2F..`) is refused:
 *    the escape is data here, and Envoy keeps it, but a backend that decodes it first would resolve a path
 *    outside the operation. The same holds for `..;x` (Servlet containers drop `;x` before resolving).
 */

export type NormalizedPath =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly reason: PathRefusal; readonly message: string };

/** Machine-readable reasons a path is refused (`LastError.Reason`-style, shown in logs). */
export type PathRefusal = 'MalformedPercentEncoding' | 'HiddenDotSegment';

const unreservedEscape = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[dDeE]|5[fF]|7[eE])/g;
const malformedEscape = /%(?![0-9A-Fa-f]{2})/;
const encodedSlash = /%(?:2[fF]|5[cC])/;
const mayHideDotSegment = /%(?:2[fF]|5[cC])|;/;
const dotSegment = /\/\.\.?(?:\/|$)/;

export function normalizeRequestPath(path: string): NormalizedPath {
  // Not origin-form (`*`, or no path at all): no API can match it, and there is nothing to resolve.
  if (!path.startsWith('/') && !path.startsWith('\\')) return { ok: true, path };
  const escaped = path.includes('%');
  const malformed = escaped ? malformedEscape.exec(path) : null;
  if (malformed) {
    return {
      ok: false,
      reason: 'MalformedPercentEncoding',
      message: `the path has a "%" that does not start a percent-encoded byte at offset ${malformed.index}`,
    };
  }
  // Each step only when it has something to do: most paths need none of them.
  let resolved = escaped
    ? path.replace(unreservedEscape, (byte) => String.fromCharCode(Number.parseInt(byte.slice(1), 16)))
    : path;
  if (resolved.includes('\\')) resolved = resolved.replaceAll('\\', '/');
  if (resolved.includes('//')) resolved = resolved.replace(/\/{2,}/g, '/');
  if (dotSegment.test(resolved)) resolved = removeDotSegments(resolved);
  const hiding = mayHideDotSegment.test(resolved)
    ? resolved.split('/').find((segment) => segment.split(encodedSlash).some(isDotSegment))
    : undefined;
  if (hiding !== undefined) {
    return {
      ok: false,
      reason: 'HiddenDotSegment',
      message: `the path segment "${hiding}" hides a dot-segment (behind an encoded slash, or before ";")`,
    };
  }
  return { ok: true, path: resolved };
}

/** `.` and `..` (already decoded), also when followed by `;parameters`, which some servers strip first. */
export function isDotSegment(piece: string): boolean {
  return piece === '.' || piece === '..' || /^\.\.?;/.test(piece);
}

/**
 * RFC 3986 §5.2.4 for an absolute path whose slashes are already merged: `.` goes, `..` takes the segment before
 * it (none at the root); a dot-segment at the end leaves a trailing slash (`/a/b/..` → `/a/`).
 */
export function removeDotSegments(path: string): string {
  const input = path.split('/').slice(1);
  const output: string[] = [];
  for (let index = 0; index < input.length; index++) {
    const segment = input[index]!;
    const last = index === input.length - 1;
    if (segment === '.' || segment === '..') {
      if (segment === '..') output.pop();
      if (last) output.push('');
      continue;
    }
    output.push(segment);
  }
  return `/${output.join('/')}`;
}

/** A path segment as text (`%2F` inside it is a slash in the value, not a separator); malformed stays as is. */
export function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
