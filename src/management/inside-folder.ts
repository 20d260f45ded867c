import path from 'node:path';
import { formatPath } from '../config/load.js';
import { isInsideFolder } from '../inside-folder.js';
import type { ConfigDocument } from './config-document.js';
import { ManagementError } from './errors.js';

export { isInsideFolder };

/**
 * The management API writes only inside the configuration's folder. A `policy` that names a file is where the next
 * policy write goes, so a request could otherwise make the gateway overwrite any file it may write (`../../home/…`).
 * Refused with 400: a policy file name, set by this change, that leads outside the folder; and any file this
 * change would write outside it. `alreadyNamed`: the policy files the running configuration names — an operator
 * may keep a shared policy elsewhere by hand; the reference stays, but the API never writes through it.
 */
export function keepInsideFolder(
  document: ConfigDocument,
  configFile: string,
  alreadyNamed: ReadonlySet<string>,
): void {
  const folder = path.dirname(configFile);
  const problems: string[] = [];
  for (const { at, file } of document.policyFileReferences()) {
    if (!isInsideFolder(folder, file) && !alreadyNamed.has(file)) {
      problems.push(
        `${formatPath(at)}: the policy file ${file} is outside the configuration folder ${folder}`,
      );
    }
  }
  for (const file of document.changes().keys()) {
    if (file !== configFile && !isInsideFolder(folder, file)) {
      problems.push(`${file}: the management API writes only inside the configuration folder ${folder}`);
    }
  }
  if (problems.length > 0) {
    throw new ManagementError(
      400,
      'ValidationError',
      'policy files must be inside the configuration folder',
      problems,
    );
  }
}
