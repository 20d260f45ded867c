/**
 * The definition formats `portcullis import` understands: one importer per file, listed here.
 */
import type { ImportedApi, Importer, ImportOptions } from './model.js';
import { importer as openapi } from './openapi.js';
import { importer as wadl } from './wadl.js';
import { importer as wsdl } from './wsdl.js';

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

export const importers: ReadonlyMap<string, Importer> = new Map(
  [openapi, wadl, wsdl].map((importer) => [importer.format, importer]),
);

/** Imports `file` as `format`; throws ImportError (file, position, what) and returns nothing partial. */
export function importDefinition(format: string, file: string, options: ImportOptions): Promise<ImportedApi> {
  const importer = importers.get(format);
  if (!importer) {
    throw new TypeError(`unknown definition format "${format}" (known: ${[...importers.keys()].join(', ')})`);
  }
  return importer.importFile(file, options);
}
