/**
 * The JSONPath subset SelectToken and SelectTokens understand: $, .name, ['name'], [index] (negative from the end),
 * [*], ..name and [?(@.a.b op value)] filters. Errors are Newtonsoft's JsonException.
 */
import { CsException } from '../../runtime/core.js';
import { children, JArray, JObject, type JToken, JValue } from './tokens.js';

type PathStep =
  | { k: 'prop'; name: string }
  | { k: 'index'; i: number }
  | { k: 'wild' }
  | { k: 'deep'; name: string }
  | { k: 'filter'; path: string[]; op: string; value: unknown };

function parsePath(path: string): PathStep[] {
  const steps: PathStep[] = [];
  let i = 0;
  if (path[0] === '$') i = 1;
  while (i < path.length) {
    const c = path[i]!;
    if (c === '.') {
      if (path[i + 1] === '.') {
        const m = /^[^.[\]]+/.exec(path.slice(i + 2));
        if (!m) throw new CsException('JsonException', `Unexpected character while parsing path: ${path}`);
        steps.push({ k: 'deep', name: m[0] });
        i += 2 + m[0].length;
        continue;
      }
      i++;
      continue;
    }
    if (c === '[') {
      const end = path.indexOf(']', i);
      if (end < 0) throw new CsException('JsonException', `Path ended with an open indexer: ${path}`);
      const inner = path.slice(i + 1, end).trim();
      if (inner === '*') steps.push({ k: 'wild' });
      else if (/^-?\d+$/.test(inner)) steps.push({ k: 'index', i: Number(inner) });
      else if (/^'.*'$/.test(inner) || /^".*"$/.test(inner))
        steps.push({ k: 'prop', name: inner.slice(1, -1) });
      else {
        const f = /^\?\(@\.([\w.]+)\s*(==|!=|>|<|>=|<=)\s*(.+)\)$/.exec(inner);
        if (!f)
          throw new CsException('JsonException', `Unexpected character while parsing path indexer: ${inner}`);
        const raw = f[3]!.trim();
        const value = /^'.*'$/.test(raw)
          ? raw.slice(1, -1)
          : raw === 'true'
            ? true
            : raw === 'false'
              ? false
              : raw === 'null'
                ? null
                : Number(raw);
        steps.push({ k: 'filter', path: f[1]!.split('.'), op: f[2]!, value });
      }
      i = end + 1;
      continue;
    }
    if (c === '*') {
      steps.push({ k: 'wild' });
      i++;
      continue;
    }
    // A ']' with no '[' before it is the only character no step can start with.
    const m = /^[^.[\]]+/.exec(path.slice(i));
    if (!m) throw new CsException('JsonException', `Unexpected character while parsing path: ${c}`);
    steps.push({ k: 'prop', name: m[0] });
    i += m[0].length;
  }
  return steps;
}

const looseEq = (a: unknown, b: unknown): boolean =>
  a === b || ((typeof a === 'number' || typeof a === 'bigint') && Number(a) === Number(b));

function descendants(t: JToken, out: JToken[]): void {
  for (const c of children(t)) {
    out.push(c);
    descendants(c, out);
  }
}

/** The tokens under `root` that `path` selects, in document order of the steps that reached them. */
export function selectTokens(root: JToken, path: string): JToken[] {
  let cur: JToken[] = [root];
  for (const s of parsePath(path)) {
    const next: JToken[] = [];
    for (const t of cur) {
      if (s.k === 'prop') {
        if (t instanceof JObject) {
          const v = t.get(s.name);
          if (v) next.push(v);
        }
      } else if (s.k === 'index') {
        if (t instanceof JArray) {
          const v = t.items[s.i < 0 ? t.items.length + s.i : s.i];
          if (v) next.push(v);
        }
      } else if (s.k === 'wild') {
        next.push(...children(t));
      } else if (s.k === 'deep') {
        const all: JToken[] = [t];
        descendants(t, all);
        for (const d of all) if (d instanceof JObject && d.get(s.name)) next.push(d.get(s.name)!);
      } else {
        for (const c of children(t)) {
          let v: JToken | null = c;
          for (const n of s.path) v = v instanceof JObject ? v.get(n) : null;
          if (!(v instanceof JValue)) continue;
          const a = v.value;
          const b = s.value;
          const ok =
            s.op === '=='
              ? looseEq(a, b)
              : s.op === '!='
                ? !looseEq(a, b)
                : s.op === '>'
                  ? Number(a) > Number(b)
                  : s.op === '<'
                    ? Number(a) < Number(b)
                    : s.op === '>='
                      ? Number(a) >= Number(b)
                      : Number(a) <= Number(b);
          if (ok) next.push(c);
        }
      }
    }
    cur = next;
  }
  return cur;
}
