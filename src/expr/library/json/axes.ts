/**
 * Newtonsoft's axes over the token tree, where a JProperty is a container too (its child is its value):
 * JToken.Children / Ancestors / AncestorsAndSelf and JContainer.Descendants / DescendantsAndSelf, in the order
 * Newtonsoft yields them. Used by the JToken members (types.ts) and by Newtonsoft.Json.Linq.Extensions.
 */
import { JArray, JObject, JProperty, type JToken } from './tokens.js';

/** JToken.Children(): an object's properties, an array's items, a property's value; none for a value. */
export function childTokens(t: JToken): JToken[] {
  if (t instanceof JObject) return [...t.props.values()];
  if (t instanceof JArray) return [...t.items];
  if (t instanceof JProperty) return [t.value];
  return [];
}

/** JToken.Ancestors(): the parent, its parent, … (properties included). */
export function tokenAncestors(t: JToken): JToken[] {
  const out: JToken[] = [];
  for (let p = t.parent; p; p = p.parent) out.push(p);
  return out;
}

/** JContainer.Descendants(): every token below, in document order; `onToken` runs per token (steps). */
export function tokenDescendants(t: JToken, onToken: () => void = () => {}): JToken[] {
  const out: JToken[] = [];
  // A loop over a stack, not recursion: a deeply nested body must not exhaust the stack.
  const stack: [JToken[], number][] = [[childTokens(t), 0]];
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const next = top[0][top[1]++];
    if (!next) {
      stack.pop();
      continue;
    }
    onToken();
    out.push(next);
    const kids = childTokens(next);
    if (kids.length) stack.push([kids, 0]);
  }
  return out;
}
