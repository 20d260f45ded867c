/**
 * `export apiops` into a folder that already holds artifacts (typically the one the configuration was imported
 * from). Two things a plain overwrite would get wrong:
 *
 * - **Environment values stay out of the base artifacts.** APIOps keeps one set of artifacts, the lowest
 *   environment's, and a `configuration.<env>.yaml` per other environment whose entries (`apis`, `backends`,
 *   `namedValues`, each `{ name, properties }`) the publisher lays over them (Azure/apiops,
 *   docs/apiops/3-apimTools/apiops-2-2-tools-publisher.md, "Configuration Override Across Environments"). A
 *   configuration imported with `--overrides configuration.prod.yaml` holds prod's service URLs and named values;
 *   exported, those go into an overrides file and the artifacts keep the values the folder had.
 * - **What the gateway does not model is carried through.** An information file the folder holds keeps every
 *   property the export does not write (a product's terms and subscriptionsLimit, tags, …); a file the export
 *   cannot merge into (not JSON with `properties`) stops the export before anything is written.
 */

/** Where environment values are: the overrides section, the information file's path, the property. */
const environmentValues = [
  { section: 'apis', file: /^apis\/([^/]+)\/apiInformation\.json$/, property: 'serviceUrl' },
  { section: 'backends', file: /^backends\/([^/]+)\/backendInformation\.json$/, property: 'url' },
  { section: 'namedValues', file: /^named values\/([^/]+)\/namedValueInformation\.json$/, property: 'value' },
] as const;

export interface OverrideEntry {
  readonly name: string;
  readonly properties: Record<string, unknown>;
}

export interface FolderPlan {
  /** The files to write: the export's, merged into what the folder held. */
  readonly files: ReadonlyMap<string, string>;
  /** This environment's values that differ from the folder's base artifacts, by overrides section. */
  readonly environment: ReadonlyMap<string, readonly OverrideEntry[]>;
  /** `file: properties` kept from the folder because the gateway does not model them. */
  readonly carried: readonly string[];
  /** Files the export would replace and lose what they hold: nothing may be written. */
  readonly refused: readonly string[];
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `existing(relative)`: the folder's text of that file, or undefined when it has none. */
export function planOverFolder(
  exported: ReadonlyMap<string, string>,
  existing: (relative: string) => string | undefined,
): FolderPlan {
  const files = new Map<string, string>();
  const environment = new Map<string, OverrideEntry[]>();
  const carried: string[] = [];
  const refused: string[] = [];
  for (const [relative, text] of exported) {
    const before = existing(relative);
    if (!relative.endsWith('.json')) {
      files.set(relative, text);
      continue;
    }
    const written = JSON.parse(text) as unknown;
    // Lists (a product's apis.json) are the gateway's own model through and through: written as exported.
    if (!isRecord(written) || !isRecord(written.properties)) {
      files.set(relative, text);
      continue;
    }
    let held: Json | undefined;
    if (before !== undefined) {
      try {
        held = JSON.parse(before.replace(/^\uFEFF/, '')) as Json;
      } catch {
        held = undefined;
      }
      if (!isRecord(held) || !isRecord(held.properties)) {
        refused.push(
          `${relative}: not JSON with "properties", so what it holds cannot be kept; it would be replaced`,
        );
        continue;
      }
    }
    const heldProperties = (held?.properties ?? {}) as Json;
    const exportedProperties = written.properties;
    const properties: Json = { ...heldProperties, ...exportedProperties };
    const kept = Object.keys(heldProperties).filter((key) => !Object.hasOwn(exportedProperties, key));
    if (kept.length > 0) carried.push(`${relative}: ${kept.join(', ')}`);

    for (const place of environmentValues) {
      const name = place.file.exec(relative)?.[1];
      const value = exportedProperties[place.property];
      if (name === undefined || value === undefined) continue;
      // A secret named value's value is never in the artifacts (the secrets file has it).
      if (place.section === 'namedValues' && exportedProperties.secret === true) continue;
      const base = heldProperties[place.property] ?? value;
      if (JSON.stringify(base) === JSON.stringify(value)) continue;
      properties[place.property] = base;
      const list = environment.get(place.section) ?? [];
      list.push({ name, properties: { [place.property]: value } });
      environment.set(place.section, list);
    }
    files.set(relative, `${JSON.stringify({ ...held, properties }, null, 2)}\n`);
  }
  return { files, environment, carried, refused };
}

/**
 * The overrides file's data with `sections` laid in: an entry of the same name gets the new properties over its
 * own, others are appended; every other section and entry (loggers, diagnostics, apimServiceName) stays.
 */
export function mergeOverrides(
  held: unknown,
  sections: ReadonlyMap<string, readonly OverrideEntry[]>,
): Record<string, unknown> {
  const data: Json = isRecord(held) ? { ...held } : {};
  for (const [section, entries] of sections) {
    const list = Array.isArray(data[section]) ? [...(data[section] as unknown[])] : [];
    for (const entry of entries) {
      const index = list.findIndex((item) => isRecord(item) && item.name === entry.name);
      const current = index >= 0 ? (list[index] as Json) : undefined;
      const merged = {
        ...current,
        name: entry.name,
        properties: { ...(isRecord(current?.properties) ? current.properties : {}), ...entry.properties },
      };
      if (index >= 0) list[index] = merged;
      else list.push(merged);
    }
    data[section] = list;
  }
  return data;
}
