/**
 * The V8 flags `up` starts its Node children with (engines, the warm spare, the service): scripts/node-runtime.js's
 * `nodeFlags`, which says why, and which bin/portcullis.js gives the processes it starts. test/unit/runtime.test.ts
 * checks that they agree.
 */
export const nodeFlags: readonly string[] = ['--min-semi-space-size=8'];
