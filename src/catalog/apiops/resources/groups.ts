import { configId, reportUnused } from '../artifacts.js';
import { informationFile, type ResourceKind } from '../context.js';

const idPattern = /^[A-Za-z0-9_.-]+$/;

/** `groups/<id>/groupInformation.json`: the configuration's `groups`. */
export const groups: ResourceKind = {
  name: 'groups',
  importInto({ artifacts, document }) {
    for (const name of artifacts.children('groups')) {
      const file = `groups/${name}/groupInformation.json`;
      const properties = artifacts.properties(file, 'groups', name);
      reportUnused(artifacts, file, properties, ['displayName', 'type', 'builtIn'], {
        description: 'group descriptions are not kept',
        externalId: 'groups synchronised from Microsoft Entra ID are not supported',
      });
      document.groups.push({
        id: configId(artifacts, file, name, idPattern),
        ...(typeof properties.displayName === 'string' ? { name: properties.displayName } : {}),
      });
    }
  },
  exportFrom({ config, output }) {
    for (const group of config.groups) {
      output.set(
        `groups/${group.id}/groupInformation.json`,
        informationFile({ displayName: group.name ?? group.id, type: 'custom' }),
      );
    }
  },
};
