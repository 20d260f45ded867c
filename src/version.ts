import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from './package-root.js';

/** Portcullis's version, as package.json says: what `--version` prints and the MCP endpoint's `serverInfo` reports. */
export const PORTCULLIS_VERSION: string = (
  JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }
).version;
