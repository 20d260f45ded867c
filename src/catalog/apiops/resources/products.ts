import { type ArtifactFolder, configId, reportUnused } from '../artifacts.js';
import { informationFile, type ResourceKind } from '../context.js';
import type { ProductEntry } from '../model.js';

const reasons: Record<string, string> = {
  description: 'product descriptions are not kept',
  terms: 'developer-portal terms of use are not kept',
  approvalRequired: 'subscription approval is not supported (subscriptions are configured, not requested)',
  subscriptionsLimit: 'a limit on subscriptions per user is not supported',
};

/** Names listed by the APIOps CLI's `apis.json` / `groups.json`, or the extractor's `apis/<name>/` folders. */
function members(artifacts: ArtifactFolder, folder: string, kind: 'apis' | 'groups'): string[] {
  const listed = artifacts.json(`${folder}/${kind}.json`);
  const names = Array.isArray(listed)
    ? listed.map((entry) =>
        typeof entry === 'string' ? entry : String((entry as { name?: unknown })?.name ?? ''),
      )
    : [];
  return [...new Set([...names.filter(Boolean), ...artifacts.children(`${folder}/${kind}`)])];
}

/** `products/<id>/`: the product, its APIs and its policy; group visibility is listed as not carried over. */
export const products: ResourceKind = {
  name: 'products',
  importInto({ artifacts, document, output, apiIds }) {
    for (const name of artifacts.children('products')) {
      const folder = `products/${name}`;
      const file = `${folder}/productInformation.json`;
      const properties = artifacts.properties(file, 'products', name);
      reportUnused(artifacts, file, properties, ['displayName', 'subscriptionRequired', 'state'], reasons);
      if (properties.state === 'notPublished') {
        artifacts.skip(
          file,
          'state notPublished: Portcullis has no unpublished products, the product is served',
        );
      }
      const id = configId(artifacts, folder, name);
      const product: ProductEntry = {
        id,
        ...(typeof properties.displayName === 'string' ? { name: properties.displayName } : {}),
        // API Management's default: a product needs a subscription unless it says otherwise.
        subscriptionRequired: properties.subscriptionRequired !== false,
        apis: [],
      };
      for (const api of members(artifacts, folder, 'apis')) {
        const apiId = apiIds.get(api);
        if (apiId === undefined) artifacts.skip(`${folder}/apis/${api}`, `API "${api}" was not carried over`);
        else product.apis!.push(apiId);
      }
      const groups = members(artifacts, folder, 'groups');
      if (groups.length > 0) {
        artifacts.skip(
          `${folder}/groups`,
          `visibility to groups ${groups.join(', ')}: products are not hidden by group`,
        );
      }
      for (const other of artifacts
        .children(folder)
        .filter((entry) => entry !== 'apis' && entry !== 'groups')) {
        artifacts.skip(
          `${folder}/${other}`,
          other === 'tags' ? 'tags are not kept' : 'not supported by Portcullis',
        );
      }
      const policy = artifacts.text(`${folder}/policy.xml`);
      if (policy !== undefined) {
        output.set(`policies/products/${id}.xml`, policy);
        product.policy = `policies/products/${id}.xml`;
      }
      document.products.push(product);
    }
  },
  exportFrom({ config, output, policyText }) {
    for (const product of config.products) {
      const folder = `products/${product.id}`;
      output.set(
        `${folder}/productInformation.json`,
        informationFile({
          displayName: product.name ?? product.id,
          state: 'published',
          subscriptionRequired: product.subscriptionRequired ?? true,
        }),
      );
      if (product.policy !== undefined) output.set(`${folder}/policy.xml`, policyText(product.policy));
      for (const api of product.apis ?? [])
        output.set(`${folder}/apis/${api}/productApiInformation.json`, '{}\n');
    }
  },
};
