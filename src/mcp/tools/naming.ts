import type { ToolOperation } from '../types.js';

/**
 * Tool names follow the strictest rule in common use (Anthropic and OpenAI tool APIs: `^[A-Za-z0-9_-]{1,64}$`),
 * which also satisfies MCP 2025-11-25 (`[A-Za-z0-9_.-]{1,128}`), so a name works in every client unchanged.
 */
const MAX_LENGTH = 64;
const UNSAFE = /[^A-Za-z0-9_-]+/g;

function sanitize(raw: string): string {
  return raw
    .replace(UNSAFE, '_')
    .replace(/_+/g, '_')
    .replace(/^_+|_+$/g, '');
}

function clip(name: string): string {
  return name.length <= MAX_LENGTH ? name : name.slice(0, MAX_LENGTH);
}

/** `operationId` if it has one, else the method and the template: `GET /api/Course/{id}` → `get_api_Course_id`. */
export function baseToolName(op: ToolOperation): string {
  const fromId = op.operationId ? sanitize(op.operationId) : '';
  if (fromId) return clip(fromId);
  const path = sanitize(op.urlTemplate.replace(/[{}*]/g, ''));
  return clip(`${op.method.toLowerCase()}_${path || 'root'}`);
}

/**
 * Names every operation, in a deterministic order, so the same catalog always yields the same names. When two
 * APIs produce the same base name, each colliding tool is prefixed with its API id; a remaining collision (the
 * same API twice) gets a numeric suffix.
 */
export function assignToolNames(ops: readonly ToolOperation[]): Map<ToolOperation, string> {
  const sorted = [...ops].sort(compareOperations);
  const counts = new Map<string, number>();
  for (const op of sorted) {
    const base = baseToolName(op);
    counts.set(base, (counts.get(base) ?? 0) + 1);
  }
  const names = new Map<ToolOperation, string>();
  const taken = new Set<string>();
  for (const op of sorted) {
    const base = baseToolName(op);
    let name = counts.get(base)! > 1 ? clip(sanitize(`${op.apiId}_${base}`)) : base;
    if (taken.has(name)) {
      let n = 2;
      while (taken.has(`${name.slice(0, MAX_LENGTH - String(n).length - 1)}_${n}`)) n++;
      name = `${name.slice(0, MAX_LENGTH - String(n).length - 1)}_${n}`;
    }
    taken.add(name);
    names.set(op, name);
  }
  return names;
}

function compareOperations(a: ToolOperation, b: ToolOperation): number {
  return (
    a.apiId.localeCompare(b.apiId) ||
    a.urlTemplate.localeCompare(b.urlTemplate) ||
    a.method.localeCompare(b.method) ||
    (a.operationId ?? '').localeCompare(b.operationId ?? '')
  );
}
