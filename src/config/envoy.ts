import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { buildBootstrap } from '../../envoy/bootstrap.js';
import type { RuntimePlan } from './plan.js';

export function bootstrapYaml(plan: RuntimePlan): string {
  return stringify(buildBootstrap(plan), { lineWidth: 0 });
}

/** Writes the bootstrap to a fresh temporary folder and returns its path. */
export async function writeBootstrap(plan: RuntimePlan): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-envoy-'));
  const file = path.join(directory, 'envoy.yaml');
  await writeFile(file, bootstrapYaml(plan));
  return file;
}

export interface EnvoyArgsOptions {
  readonly concurrency: number;
  readonly logLevel: string;
}

/**
 * Command-line arguments for one Envoy. Hot restart is off: each Envoy owns its base id, so several (tests in
 * parallel) can run on one machine without sharing memory segments.
 */
export function envoyArgs(bootstrapFile: string, options: EnvoyArgsOptions): string[] {
  return [
    '-c',
    bootstrapFile,
    '--concurrency',
    String(options.concurrency),
    '-l',
    options.logLevel,
    '--disable-hot-restart',
    '--log-format',
    '[%Y-%m-%d %T.%e][%l] %v',
  ];
}
