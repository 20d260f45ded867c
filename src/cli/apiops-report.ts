import type { Finding } from '../catalog/apiops/index.js';

const headings: Record<Finding['kind'], string> = {
  skipped: 'not carried over',
  changed: 'carried over in another form',
  todo: 'to do before the gateway starts',
};

/**
 * What `import apiops` / `export apiops` did not carry over, changed, or leave to the operator: one line each,
 * `file: message`, grouped under a heading, on stderr (the outcome itself goes to stdout).
 */
export function writeFindings(
  findings: readonly Finding[],
  out: NodeJS.WritableStream = process.stderr,
): void {
  for (const kind of ['skipped', 'changed', 'todo'] as const) {
    const lines = findings.filter((finding) => finding.kind === kind);
    if (lines.length === 0) continue;
    out.write(`${headings[kind]} (${lines.length}):\n`);
    for (const finding of lines) out.write(`  ${finding.file}: ${finding.message}\n`);
  }
}
