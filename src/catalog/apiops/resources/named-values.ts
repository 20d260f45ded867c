import { isRecord, reportUnused } from '../artifacts.js';
import { informationFile, type ResourceKind } from '../context.js';
import type { NamedValueEntry } from '../model.js';

const folders = ['named values', 'namedValues'];

/** The configuration's named-value keys (what `{{name}}` may say). */
const keyPattern = /^[A-Za-z0-9._-]+$/;

/** A release pipeline's token (`{#name#}`, replaced by the APIOps samples' token step before publishing). */
const token = /^\{#([A-Za-z_][A-Za-z0-9_]*)#\}$/;

/** The environment variable the operator sets for a value the artifacts do not carry. */
export function environmentVariableFor(key: string): string {
  return `NAMED_VALUE_${key.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`;
}

/**
 * `named values/<name>/namedValueInformation.json`: the configuration's `namedValues`, keyed by display name (what
 * policies write between `{{ }}`). A value the artifacts do not hold — a Key Vault secret, a secret the extractor
 * leaves out, a pipeline token — becomes an environment variable the operator sets; nothing is made up.
 */
export const namedValues: ResourceKind = {
  name: 'named values',
  importInto({ artifacts, document }) {
    const folder = artifacts.folder(folders);
    if (folder === undefined) return;
    for (const name of artifacts.children(folder)) {
      const file = `${folder}/${name}/namedValueInformation.json`;
      const properties = artifacts.properties(file, 'namedValues', name);
      reportUnused(artifacts, file, properties, ['displayName', 'value', 'secret', 'keyVault'], {
        tags: 'named-value tags are not kept',
      });
      const key = typeof properties.displayName === 'string' ? properties.displayName : name;
      if (!keyPattern.test(key)) {
        artifacts.skip(
          file,
          `displayName "${key}" is not a Portcullis named-value name (letters, digits, ".", "-", "_")`,
        );
        continue;
      }
      const secret = properties.secret === true;
      const value = typeof properties.value === 'string' ? properties.value : undefined;
      const keyVault = isRecord(properties.keyVault) ? properties.keyVault : undefined;
      let entry: NamedValueEntry;
      if (keyVault && typeof keyVault.secretIdentifier === 'string') {
        const env = environmentVariableFor(key);
        entry = {
          env,
          secret: true,
          keyVault: {
            secretIdentifier: keyVault.secretIdentifier,
            ...(typeof keyVault.identityClientId === 'string'
              ? { identityClientId: keyVault.identityClientId }
              : {}),
          },
        };
        artifacts.todo(file, `set ${env} to the Key Vault secret ${keyVault.secretIdentifier}`);
      } else if (value !== undefined && token.test(value)) {
        const env = token.exec(value)![1]!;
        entry = { env, secret };
        artifacts.todo(file, `set ${env}: the value is the pipeline token ${value}`);
      } else if (value === undefined) {
        const env = environmentVariableFor(key);
        entry = { env, secret };
        artifacts.todo(
          file,
          `set ${env}: the artifacts hold no value for "${key}"${secret ? ' (a secret is never extracted)' : ''}`,
        );
      } else {
        entry = secret ? { value, secret: true } : value;
      }
      document.namedValues[key] = entry;
    }
  },
  exportFrom({ config, output, secrets }) {
    for (const [key, entry] of Object.entries(config.namedValues)) {
      const file = `named values/${key}/namedValueInformation.json`;
      if (typeof entry === 'string') {
        output.set(file, informationFile({ displayName: key, value: entry, secret: false }));
      } else if ('value' in entry && entry.secret !== true) {
        output.set(file, informationFile({ displayName: key, value: entry.value, secret: false }));
      } else if ('value' in entry) {
        // As the extractor writes a secret: without its value, which goes only where the operator asked.
        output.set(file, informationFile({ displayName: key, secret: true }));
        const list = secrets.get('namedValues') ?? [];
        list.push({ name: key, properties: { value: entry.value } });
        secrets.set('namedValues', list);
      } else if (entry.keyVault) {
        output.set(file, informationFile({ displayName: key, secret: true, keyVault: entry.keyVault }));
      } else {
        output.set(
          file,
          informationFile({ displayName: key, value: `{#${entry.env}#}`, secret: entry.secret ?? true }),
        );
      }
    }
  },
};
