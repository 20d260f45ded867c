/**
 * `decodeURI` as .NET's Uri unescapes a path: well-formed escapes are decoded, a malformed one (`%ZZ`, a lone `%`,
 * bytes that are not UTF-8) stays as it was written. `decodeURI` throws a URIError on those instead, and a path is
 * whatever a client sent.
 */
export function decodeUriLeniently(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURI(text);
  } catch {
    // Decode each run of escapes on its own; a run that does not decode stays escaped.
    return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURI(run);
      } catch {
        return run;
      }
    });
  }
}
