import type { Document } from 'yaml';

/** Nodes that aliases may expand to in one document (the YAML library's default, stated where it matters). */
export const maxAliasCount = 100;

/** A document whose aliases cannot become data: too many (an alias bomb), or one used before its anchor. */
export class YamlAliasError extends Error {
  override readonly name = 'YamlAliasError';
}

/**
 * The data of a parsed YAML (or JSON) document, aliases expanded to at most `maxAliasCount` nodes. The one bounded
 * reader for YAML someone else may have written: the gateway file, test files, the management API's bodies and
 * imported definitions all turn documents into data here, so a "billion laughs" is refused at once everywhere.
 */
export function yamlData(document: Pick<Document, 'toJS'>): unknown {
  try {
    return document.toJS({ maxAliasCount });
  } catch (error) {
    // The YAML library reports alias problems (too many, an alias before its anchor) as ReferenceError.
    if (!(error instanceof ReferenceError)) throw error;
    const reason = error.message.split('\n')[0]!;
    throw new YamlAliasError(
      reason.startsWith('Excessive alias count')
        ? `aliases would expand past ${maxAliasCount} nodes (a YAML alias bomb?)`
        : reason,
    );
  }
}
