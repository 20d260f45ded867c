import { reportUnused } from '../artifacts.js';
import { informationFile, type ResourceKind } from '../context.js';

const folders = ['version sets', 'versionSets'];

/** `version sets/<id>/versionSetInformation.json`: the configuration's `versionSets` (path versioning only). */
export const versionSets: ResourceKind = {
  name: 'version sets',
  importInto({ artifacts, document }) {
    const folder = artifacts.folder(folders);
    if (folder === undefined) return;
    for (const name of artifacts.children(folder)) {
      const file = `${folder}/${name}/versionSetInformation.json`;
      const properties = artifacts.properties(file, 'versionSets', name);
      reportUnused(artifacts, file, properties, ['displayName', 'description', 'versioningScheme'], {
        versionHeaderName: 'header versioning is not served',
        versionQueryName: 'query-string versioning is not served',
      });
      const scheme = properties.versioningScheme;
      if (scheme !== 'Segment') {
        // The APIs of the set then share one path and differ by a header or query parameter: their own
        // findings say they were left out, since Portcullis tells APIs apart by host and path only.
        artifacts.skip(file, `versioningScheme ${String(scheme)}: only Segment (path) versioning is served`);
        continue;
      }
      document.versionSets.push({
        id: name,
        ...(typeof properties.displayName === 'string' ? { name: properties.displayName } : {}),
        ...(typeof properties.description === 'string' ? { description: properties.description } : {}),
      });
    }
  },
  exportFrom({ config, output }) {
    for (const set of config.versionSets) {
      output.set(
        `version sets/${set.id}/versionSetInformation.json`,
        informationFile({
          displayName: set.name ?? set.id,
          description: set.description,
          versioningScheme: 'Segment',
        }),
      );
    }
  },
};
