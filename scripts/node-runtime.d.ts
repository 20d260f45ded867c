// Types of scripts/node-runtime.js (plain JavaScript that an end-of-life Node still runs) for the TypeScript that
// imports it.
export const pinnedNodeVersion: string;
export const nodeFlags: readonly string[];
export const oldestSupportedMajor: number;
export function isSupportedNode(version: string): boolean;
export function pinnedNodeFolder(root: string): string;
export function pinnedNodeBinary(root: string): string;
export function canProvidePinnedNode(): boolean;
export function supportedNodeFolder(root: string): string | undefined;
export function standFor(child: import('node:child_process').ChildProcess): void;
