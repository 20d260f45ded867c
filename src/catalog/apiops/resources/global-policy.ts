import type { ResourceKind } from '../context.js';

/** The instance's `policy.xml`: API Management's "All APIs" scope, the configuration's `policy`. */
export const globalPolicy: ResourceKind = {
  name: 'global policy',
  importInto({ artifacts, document, output }) {
    const text = artifacts.text('policy.xml');
    if (text === undefined) return;
    output.set('policies/global.xml', text);
    document.policy = 'policies/global.xml';
  },
  exportFrom({ config, policyText, output }) {
    if (config.policy !== undefined) output.set('policy.xml', policyText(config.policy));
  },
};
