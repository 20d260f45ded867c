import { reportUnused } from '../artifacts.js';
import { informationFile, type ResourceKind } from '../context.js';
import type { VersionSetEntry } from '../model.js';

const folders = ['version sets', 'versionSets'];

/** API Management's versioning schemes and the configuration's, with the property that names the version. */
const schemes = {
  Segment: { scheme: 'path', nameProperty: undefined },
  Header: { scheme: 'header', nameProperty: 'versionHeaderName' },
  Query: { scheme: 'query', nameProperty: 'versionQueryName' },
} as const;

type SchemeName = keyof typeof schemes;

const isScheme = (value: unknown): value is SchemeName => typeof value === 'string' && value in schemes;

/** `version sets/<id>/versionSetInformation.json`: the configuration's `versionSets`. */
export const versionSets: ResourceKind = {
  name: 'version sets',
  importInto({ artifacts, document }) {
    const folder = artifacts.folder(folders);
    if (folder === undefined) return;
    for (const name of artifacts.children(folder)) {
      const file = `${folder}/${name}/versionSetInformation.json`;
      const properties = artifacts.properties(file, 'versionSets', name);
      const scheme = properties.versioningScheme;
      if (!isScheme(scheme)) {
        // Its APIs' own findings say they were left out with it.
        artifacts.skip(file, `versioningScheme ${String(scheme)}: expected Segment, Header or Query`);
        continue;
      }
      const { scheme: configScheme, nameProperty } = schemes[scheme];
      reportUnused(
        artifacts,
        file,
        properties,
        ['displayName', 'description', 'versioningScheme', ...(nameProperty ? [nameProperty] : [])],
        {
          versionHeaderName: `only read with versioningScheme Header (this set's is ${scheme})`,
          versionQueryName: `only read with versioningScheme Query (this set's is ${scheme})`,
        },
      );
      const versionName = nameProperty === undefined ? undefined : properties[nameProperty];
      if (nameProperty !== undefined && (typeof versionName !== 'string' || versionName === '')) {
        artifacts.skip(
          file,
          `${nameProperty}: versioningScheme ${scheme} needs the name the version travels in, got ${JSON.stringify(versionName ?? null)}; the set is left out`,
        );
        continue;
      }
      const entry: VersionSetEntry = {
        id: name,
        ...(typeof properties.displayName === 'string' ? { name: properties.displayName } : {}),
        ...(typeof properties.description === 'string' ? { description: properties.description } : {}),
      };
      // `path` is the schema's default: written only for the other schemes, so the entry reads well.
      if (configScheme !== 'path')
        Object.assign(entry, { scheme: configScheme, [configScheme]: versionName });
      document.versionSets.push(entry);
    }
  },
  exportFrom({ config, output }) {
    for (const set of config.versionSets) {
      const scheme = set.scheme ?? 'path';
      const apimScheme = (Object.keys(schemes) as SchemeName[]).find(
        (key) => schemes[key].scheme === scheme,
      )!;
      output.set(
        `version sets/${set.id}/versionSetInformation.json`,
        informationFile({
          displayName: set.name ?? set.id,
          description: set.description,
          versioningScheme: apimScheme,
          versionHeaderName: scheme === 'header' ? set.header : undefined,
          versionQueryName: scheme === 'query' ? set.query : undefined,
        }),
      );
    }
  },
};
