import path from 'node:path';
import { ImportError, type ImportedApi, importDefinition } from '../catalog/importers/index.js';
import type { Diagnostic } from '../diagnostic.js';
import { ConfigError } from './config-error.js';
import type { GatewayConfig } from './schema.js';

/** A WSDL definition's XML schemas, as its import read them, or why they cannot be read (ImportedApi.xmlSchemas). */
export type DefinitionSchema = NonNullable<ImportedApi['xmlSchemas']>;
/** Each WSDL definition's schemas by API id. */
export type DefinitionSchemas = ReadonlyMap<string, DefinitionSchema>;

/**
 * Publishes the operations of every API that names a definition file (OpenAPI, WADL, WSDL): each imported
 * operation is added unless the configuration lists one with the same id. All problems of all definitions are
 * reported together, with the definition's own file, line and column. Also returns the XML schemas the WSDL
 * definitions carry, so the gateway's compile does not read those files again.
 */
export async function expandDefinitions(
  config: GatewayConfig,
  directory: string,
): Promise<{ config: GatewayConfig; definitionSchemas: DefinitionSchemas }> {
  const problems: Diagnostic[] = [];
  const definitionSchemas = new Map<string, DefinitionSchema>();
  const apis = await Promise.all(
    config.apis.map(async (api, index) => {
      if (!api.definition) return api;
      const definitionFile = path.resolve(directory, api.definition.file);
      try {
        const imported = await importDefinition(api.definition.format, definitionFile, {
          urlSuffix: api.urlSuffix,
          apiId: api.id,
          serviceUrl: api.serviceUrl,
        });
        if (imported.xmlSchemas !== undefined) definitionSchemas.set(api.id, imported.xmlSchemas);
        const listed = new Set(api.operations.map((operation) => operation.id).filter(Boolean));
        const added = imported.operations
          .filter((operation) => !listed.has(operation.id))
          .map((operation) => ({ ...operation, policy: undefined }));
        return {
          ...api,
          type: imported.type,
          description: api.description ?? imported.description,
          operations: [...api.operations, ...added],
        };
      } catch (error) {
        if (!(error instanceof ImportError)) throw error;
        for (const problem of error.problems) {
          problems.push({
            file: problem.file,
            line: problem.line ?? 1,
            column: problem.column ?? 1,
            path: problem.path ?? `apis[${index}].definition`,
            message: problem.message,
          });
        }
        return api;
      }
    }),
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return { config: { ...config, apis } as GatewayConfig, definitionSchemas };
}
