/**
 * The definition formats `portcullis import` understands: one importer per file, listed here.
 */
import type { ImportedApi, Importer, ImportOptions } from './model.js';

export type {
  ImportedApi,
  ImportedOperation,
  ImportedParameter,
  ImportedResponse,
  Importer,
  ImportOptions,
  JsonSchema,
  SoapMatch,
  XmlName,
} from './model.js';
export { ImportError, ImportRefusedError } from './model.js';
export { firstBodyElement, matchSoapOperation, needsBody, requestAction } from './soap-match.js';

/**
 * Each format's importer, loaded when a definition of that format is imported: the OpenAPI parser and its schema
 * validators are some 150 modules, which every process that loads a gateway file (an engine, `validate`) would
 * otherwise pay for at start, definitions or not. The key is the importer's `format` (a unit test holds them equal).
 */
export const importers: ReadonlyMap<string, () => Promise<Importer>> = new Map([
  ['openapi', async () => (await import('./openapi.js')).importer],
  ['wadl', async () => (await import('./wadl.js')).importer],
  ['wsdl', async () => (await import('./wsdl.js')).importer],
]);

/** Imports `file` as `format`; throws ImportError (file, position, what) and returns nothing partial. */
export async function importDefinition(
  format: string,
  file: string,
  options: ImportOptions,
): Promise<ImportedApi> {
  const load = importers.get(format);
  if (!load) {
    throw new TypeError(`unknown definition format "${format}" (known: ${[...importers.keys()].join(', ')})`);
  }
  return (await load()).importFile(file, options);
}
