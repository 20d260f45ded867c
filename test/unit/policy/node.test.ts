import { describe, expect, it } from 'vitest';
import { type CompileContext, defineElement } from '../../../src/policy/element.js';
import { type Literal, PolicyNode, type ValueSource } from '../../../src/policy/node.js';
import type { RunContext } from '../../../src/policy/runtime.js';
import { ALL_SCOPES, bool, elements, int, oneOf, str, text } from '../../../src/policy/schema.js';
import type { XmlElement } from '../../../src/policy/xml.js';

/** An element declared for this test only: each kind of attribute, required, defaulted and optional. */
const probe = defineElement({
  name: 'probe',
  summary: 'test only',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: {
    count: int({ required: true }),
    strict: bool({ default: false }),
    mode: oneOf(['fast', 'slow'], { default: 'fast', expression: false }),
    label: str(),
  },
  content: elements(
    { name: 'item', attributes: { weight: int({ default: 1 }) }, content: text(true, true) },
    { name: 'note', content: text(true) },
  ),
  compile(node) {
    // Declared and required or defaulted: a getter of the declared kind, no check for absence needed.
    const count: (run: RunContext) => number = node.getter('count');
    const strict: (run: RunContext) => boolean = node.getter('strict');
    // A literal-only enum reads as its own values.
    const mode: 'fast' | 'slow' = node.literal('mode');
    // Optional: may be absent.
    const label = node.getter('label');
    // @ts-expect-error an optional attribute's getter may be undefined
    const unchecked: (run: RunContext) => string = node.getter('label');
    // @ts-expect-error an attribute the element did not declare
    node.getter('colour');
    // @ts-expect-error a child the element did not declare
    node.childrenNamed('thing');
    // Children are typed by their own declaration: required text, defaulted attribute.
    const items = node.childrenNamed('item').map((i) => [i.getter('weight'), i.text()] as const);
    // @ts-expect-error optional text may be absent
    const note: (run: RunContext) => string = node.child('note')!.text();
    const order: string[] = [];
    node.eachChild({
      item: (i) => order.push(`item:${i.literal('weight')}`),
      note: () => order.push('note'),
    });
    void [unchecked, note];
    const run = {} as RunContext;
    return () => {
      seen = {
        count: count(run),
        strict: strict(run),
        mode,
        label: label?.(run),
        items: items.map(([w, t]) => [w(run), t(run)]),
        order,
      };
      return 'next';
    };
  },
});
let seen: Record<string, unknown> = {};

const literal = (value: Literal): ValueSource => ({ kind: 'literal', value, text: String(value) });

function node(
  name: string,
  attributes: Record<string, Literal>,
  children: PolicyNode[] = [],
  content?: string,
): PolicyNode {
  const spec =
    name === 'probe'
      ? probe.attributes
      : (probe.content.kind === 'elements' ? probe.content.elements : []).find((c) => c.name === name)
          ?.attributes;
  return new PolicyNode(
    name,
    `policies/inbound/${name}`,
    name,
    { file: 'test.xml', line: 1, column: 1 },
    {} as XmlElement,
    new Map(Object.entries(attributes).map(([k, v]) => [k, literal(v)])),
    content === undefined ? undefined : literal(content),
    children,
    spec,
  );
}

describe('typed element attributes', () => {
  it('reads each attribute as its declaration says, children in document order', () => {
    const root = node('probe', { count: 3, strict: true, mode: 'slow' }, [
      node('item', { weight: 2 }, [], 'a'),
      node('note', {}, [], 'n'),
      node('item', { weight: 5 }, [], 'b'),
    ]);
    const statement = probe.compile(root, {} as CompileContext);
    expect(statement({} as RunContext)).toBe('next');
    expect(seen).toEqual({
      count: 3,
      strict: true,
      mode: 'slow',
      label: undefined,
      items: [
        [2, 'a'],
        [5, 'b'],
      ],
      order: ['item:2', 'note', 'item:5'],
    });
  });

  it('gives every literal at once, for helpers shared by elements that declare alike', () => {
    const root = node('probe', { count: 3, strict: false, mode: 'fast', id: 'p1' });
    expect(root.literals()).toEqual({ count: 3, strict: false, mode: 'fast', id: 'p1' });
    expect(root.id).toBe('p1');
  });
});
