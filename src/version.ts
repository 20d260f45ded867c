import { readFileSync } from 'node:fs';

/** Portcullis's version, as package.json says: what `--version` prints and the MCP endpoint's `serverInfo` reports. */
export const PORTCULLIS_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
