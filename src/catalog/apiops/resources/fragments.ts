import { configId, reportUnused } from '../artifacts.js';
import { informationFile, type ResourceKind } from '../context.js';

const folders = ['policy fragments', 'policyFragments'];

/** `policy fragments/<id>/policy.xml`: the configuration's `fragments`, for `include-fragment`. */
export const fragments: ResourceKind = {
  name: 'policy fragments',
  importInto({ artifacts, document, output }) {
    const folder = artifacts.folder(folders);
    if (folder === undefined) return;
    for (const name of artifacts.children(folder)) {
      const information = `${folder}/${name}/policyFragmentInformation.json`;
      const properties = artifacts.properties(information, 'policyFragments', name);
      reportUnused(artifacts, information, properties, [], {
        description: 'fragment descriptions are not kept',
      });
      const text = artifacts.text(`${folder}/${name}/policy.xml`);
      if (text === undefined) {
        artifacts.skip(`${folder}/${name}`, 'no policy.xml: nothing to include');
        continue;
      }
      // include-fragment names the fragment by its resource name, so a changed id would break every reference.
      const id = configId(artifacts, `${folder}/${name}`, name);
      output.set(`policies/fragments/${id}.xml`, text);
      document.fragments[id] = `policies/fragments/${id}.xml`;
    }
  },
  exportFrom({ config, policyText, output }) {
    for (const [id, source] of Object.entries(config.fragments)) {
      output.set(`policy fragments/${id}/policy.xml`, policyText(source));
      output.set(`policy fragments/${id}/policyFragmentInformation.json`, informationFile({}));
    }
  },
};
