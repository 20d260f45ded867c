// Types of scripts/build.js (plain JavaScript, so that setup runs it before anything is installed) for the
// TypeScript that imports it.
export function isBuildFresh(root: string): boolean;
export function build(root: string): Promise<void>;
export function buildIfStale(root: string): Promise<boolean>;
