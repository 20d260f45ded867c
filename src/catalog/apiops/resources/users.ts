import { configId, reportUnused } from '../artifacts.js';
import { informationFile, type ResourceKind } from '../context.js';

const idPattern = /^[A-Za-z0-9_.-]+$/;

/**
 * `users/<id>/userInformation.json`. The APIOps extractor does not extract users, so this folder exists when an
 * operator (or `export apiops`) wrote it; `properties.groups` lists the user's groups. Owners that subscriptions
 * name but no file describes are added by the subscriptions.
 */
export const users: ResourceKind = {
  name: 'users',
  importInto({ artifacts, document }) {
    for (const name of artifacts.children('users')) {
      const file = `users/${name}/userInformation.json`;
      const properties = artifacts.properties(file, 'users', name);
      reportUnused(artifacts, file, properties, ['email', 'firstName', 'lastName', 'groups', 'state'], {
        note: 'user notes are not kept',
        identities: 'sign-in identities are not carried over (auth.users are the accounts that sign in)',
      });
      if (properties.state === 'blocked')
        artifacts.skip(file, 'state blocked: Portcullis users have no state');
      const groups = Array.isArray(properties.groups)
        ? properties.groups.filter((group): group is string => typeof group === 'string')
        : [];
      const known = new Set(document.groups.map((group) => group.id));
      for (const group of groups.filter((id) => !known.has(id))) {
        artifacts.skip(file, `groups: no group "${group}" among the artifacts: membership left out`);
      }
      document.users.push({
        id: configId(artifacts, file, name, idPattern),
        ...(typeof properties.email === 'string' ? { email: properties.email } : {}),
        ...(typeof properties.firstName === 'string' ? { firstName: properties.firstName } : {}),
        ...(typeof properties.lastName === 'string' ? { lastName: properties.lastName } : {}),
        ...(groups.some((id) => known.has(id)) ? { groups: groups.filter((id) => known.has(id)) } : {}),
      });
    }
  },
  exportFrom({ config, output }) {
    for (const user of config.users) {
      output.set(
        `users/${user.id}/userInformation.json`,
        informationFile({
          email: user.email,
          firstName: user.firstName,
          lastName: user.lastName,
          groups: user.groups && user.groups.length > 0 ? user.groups : undefined,
        }),
      );
    }
  },
};
