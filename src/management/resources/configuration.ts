import { parseDocument, stringify } from 'yaml';
import { YamlAliasError, yamlData } from '../../yaml-data.js';
import { type ConfigDocument, entityTag } from '../config-document.js';
import { ManagementError } from '../errors.js';
import { checkPreconditions, type ManagementResource } from '../resource.js';

const yamlMediaTypes = ['application/yaml', 'application/x-yaml', 'text/yaml', 'application/json'] as const;

/**
 * `/configuration`: the whole running configuration. `GET` exports it — the configuration file with every policy
 * document inline, so one document carries everything (other files it names, such as definitions and certificates,
 * stay references) — as YAML, or JSON when asked with `Accept: application/json`. `PUT` imports such a document:
 * validated whole and applied like any change, replacing the configuration file (YAML is kept as sent, comments
 * included).
 */
export const configuration: ManagementResource = {
  name: 'configuration',
  register(router, api) {
    router.get('/configuration', (ctx) => {
      const { document } = api.read();
      document.inlinePolicies();
      const json = document.toJSON();
      ctx.set('ETag', entityTag(json));
      ctx.set('Cache-Control', 'no-store');
      if (ctx.accepts('application/yaml', 'application/json') === 'application/json') {
        ctx.body = json;
      } else {
        ctx.type = 'application/yaml; charset=utf-8';
        ctx.body = document.toString();
      }
    });

    router.put('/configuration', async (ctx) => {
      const text = await api.readText(ctx, yamlMediaTypes);
      const parsed = parseDocument(text);
      if (parsed.errors.length > 0) {
        throw new ManagementError(
          400,
          'ValidationError',
          'the configuration is not YAML or JSON',
          parsed.errors.map((error) => `request body: ${error.message.split('\n')[0]}`),
        );
      }
      const json = ctx.is('application/json') !== false && ctx.is('application/json') !== null;
      await api.change(ctx, (document) => {
        // The configuration always exists: If-None-Match: * can never hold, If-Match compares with the export.
        checkPreconditions(ctx, exported(document), 'the configuration');
        // JSON is stored as YAML, the configuration file's language.
        document.replace(json ? stringify(jsonData(parsed)) : text);
      });
      ctx.status = 204;
    });
  },
};

/** The data of a document sent as JSON (which YAML parses, aliases included: an alias bomb is a 400). */
function jsonData(parsed: ReturnType<typeof parseDocument>): unknown {
  try {
    return yamlData(parsed);
  } catch (error) {
    if (!(error instanceof YamlAliasError)) throw error;
    throw new ManagementError(400, 'ValidationError', 'the configuration is not YAML or JSON', [
      `request body: ${error.message}`,
    ]);
  }
}

function exported(document: ConfigDocument): unknown {
  const copy = document.copy();
  copy.inlinePolicies();
  return copy.toJSON();
}
