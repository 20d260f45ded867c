/**
 * Node checks: one element of a policy document checked against its declaration — attributes known, required and
 * well-typed, content of the declared kind, children in their declared numbers — and built into the PolicyNode its
 * element compiles. Values go through value compilation; what nests statements goes back to the document compiler.
 */
import { didYouMean, shown } from './diagnostics.js';
import type { ElementDefinition, MessageTarget } from './element.js';
import { ELEMENTS } from './elements/index.js';
import { PolicyNode, type ValueSource } from './node.js';
import type { Statement } from './runtime.js';
import type { AttributeSpec, ChildSpec, ContentSpec, Section } from './schema.js';
import { compileValue, isExpression, type ValueContext } from './values.js';
import { elementChildren, textChild, type XmlElement } from './xml.js';

/** What checking an element needs from the document compiler: the value context, and compiling what nests. */
export interface NodeContext extends ValueContext {
  /** Compiles the policy statements inside `el` (content of kind `policies`: a `when`, …). */
  compileStatements(
    el: XmlElement,
    section: Section,
    path: string,
    errorPath: string,
    target: MessageTarget,
  ): Statement[];
  /** Compiles a child that is a policy element in its own right (return-response ⊃ set-header) with its node. */
  policyChild(
    el: XmlElement,
    def: ElementDefinition,
    section: Section,
    path: string,
    errorPath: string,
    target: MessageTarget,
  ): PolicyNode | undefined;
}

/** Validates attributes and content of one element against a declaration, and builds its node. */
export function buildNode(
  at: NodeContext,
  el: XmlElement,
  specs: Readonly<Record<string, AttributeSpec>>,
  content: ContentSpec,
  section: Section,
  path: string,
  errorPath: string,
  target: MessageTarget,
): PolicyNode {
  const attributes = new Map<string, ValueSource>();
  // An attribute that is present but wrong is reported once, not also as missing.
  const present = new Set(el.attributes.map((a) => a.name));
  for (const a of el.attributes) {
    if (a.name === 'id') {
      attributes.set('id', { kind: 'literal', value: a.value, text: a.value });
      continue;
    }
    // Raw content (an XSLT stylesheet, a child only rejected by name) is not checked attribute by attribute.
    if (content.kind === 'any') continue;
    const spec = specs[a.name];
    if (spec === undefined) {
      const known = Object.keys(specs);
      const hint = known.length === 0 ? ' (it takes none)' : didYouMean(a.name, known);
      at.report(a.offset, path, 'unknown-attribute', `<${el.name}> has no attribute "${a.name}"${hint}`);
      continue;
    }
    const v = compileValue(at, a.value, a.valueOffset, spec, `${el.name}/@${a.name}`, path);
    if (v !== undefined) attributes.set(a.name, v);
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (attributes.has(name)) continue;
    if (spec.required === true && !present.has(name)) {
      at.report(el.offset, path, 'attribute', `${el.name}/@${name} is required, got no "${name}" attribute`);
    } else if (spec.default !== undefined) {
      attributes.set(name, { kind: 'literal', value: spec.default, text: String(spec.default) });
    }
  }
  let text: ValueSource | undefined;
  let children: PolicyNode[] = [];
  let statements: Statement[] = [];
  switch (content.kind) {
    case 'empty':
      rejectText(at, el, path);
      for (const c of elementChildren(el)) {
        at.report(c.offset, path, 'children', `<${el.name}> must be empty, got <${c.name}>`);
      }
      break;
    case 'text': {
      if (content.markup === true && elementChildren(el).length > 0) {
        // A body written as XML: the markup between the tags is the text, exactly as written.
        const raw = at.source.text.slice(el.contentStart, el.contentEnd);
        text = { kind: 'literal', value: raw, text: raw };
        break;
      }
      for (const c of elementChildren(el)) {
        at.report(c.offset, path, 'children', `<${el.name}> holds text only, got <${c.name}>`);
      }
      const t = textChild(el);
      const raw = t?.value ?? '';
      if (raw.trim() === '') {
        if (content.required === true) {
          at.report(el.offset, path, 'children', `<${el.name}> must have a value, got an empty element`);
        }
        break;
      }
      const spec: AttributeSpec = { kind: 'string', expression: content.expression };
      const value = content.preserveWhitespace === true || isExpression(raw) ? raw : raw.trim();
      text = compileValue(at, value, t!.offset, spec, `${el.name} text`, path);
      break;
    }
    case 'policies':
      statements = at.compileStatements(el, section, path, errorPath, target);
      break;
    case 'elements': {
      if (content.text !== true) rejectText(at, el, path);
      else {
        const t = textChild(el);
        if (t !== undefined && t.value.trim() !== '') {
          const v = isExpression(t.value) ? t.value : t.value.trim();
          text = compileValue(at, v, t.offset, { kind: 'string', expression: true }, `${el.name} text`, path);
        }
      }
      children = buildChildren(at, el, content.elements, section, path, errorPath, target);
      break;
    }
    case 'any':
      break;
  }
  const node = new PolicyNode(
    el.name,
    path,
    errorPath,
    { file: at.file, ...at.source.position(el.offset) },
    el,
    attributes,
    text,
    children,
    specs,
  );
  node.statements = statements;
  return node;
}

function buildChildren(
  at: NodeContext,
  el: XmlElement,
  specs: readonly ChildSpec[],
  section: Section,
  path: string,
  errorPath: string,
  target: MessageTarget,
): PolicyNode[] {
  const out: PolicyNode[] = [];
  const counts = new Map<string, number>();
  let index = 0;
  const children = elementChildren(el);
  const steps = lastErrorSteps(children);
  for (const c of children) {
    index++;
    const childPath = `${path}/${c.name}[${index}]`;
    const childErrorPath = lastErrorPath(errorPath, steps[index - 1]!);
    const spec = specs.find((s) => s.name === c.name);
    if (spec === undefined) {
      const names = specs.map((s) => s.name);
      const allowed = names.length === 0 ? 'no child elements' : names.join(', ');
      at.report(
        c.offset,
        childPath,
        'children',
        `<${el.name}> accepts ${allowed}, got <${c.name}>${didYouMean(c.name, names)}`,
      );
      continue;
    }
    const n = (counts.get(c.name) ?? 0) + 1;
    counts.set(c.name, n);
    if (spec.max !== undefined && n === spec.max + 1) {
      at.report(
        c.offset,
        childPath,
        'children',
        `<${el.name}> accepts at most ${spec.max} <${c.name}>, got more`,
      );
      continue;
    }
    if (spec.policy === true) {
      const def = ELEMENTS.get(c.name)!;
      const childTarget = spec.target ?? target;
      const node = at.policyChild(c, def, section, childPath, childErrorPath, childTarget);
      if (node !== undefined) out.push(node);
      continue;
    }
    const node = buildNode(
      at,
      c,
      spec.attributes ?? {},
      spec.content ?? { kind: 'empty' },
      section,
      childPath,
      childErrorPath,
      target,
    );
    const name = el.attributes.find((attribute) => attribute.name === 'name')?.value;
    if (name !== undefined && !isExpression(name)) node.namedBy = name.trim();
    out.push(node);
  }
  for (const spec of specs) {
    const n = counts.get(spec.name) ?? 0;
    if (spec.min !== undefined && n < spec.min) {
      at.report(
        el.offset,
        path,
        'children',
        `<${el.name}> needs at least ${spec.min} <${spec.name}>, got ${n}`,
      );
    }
  }
  return out;
}

/** Reports the first non-blank text of an element that holds elements only. */
export function rejectText(at: ValueContext, el: XmlElement, path: string): void {
  for (const c of el.children) {
    if (c.kind === 'text' && c.value.trim() !== '') {
      at.report(
        c.offset,
        path,
        'children',
        `<${el.name}> holds elements only, got text "${shown(c.value, 40)}"`,
      );
      return;
    }
  }
}

/**
 * The steps of `context.LastError.Path` for these siblings, as "Error handling in API Management policies" (2025
 * revision) writes it — `choose\otherwise\choose[3]\when[2]`: an element is named alone when it is the only
 * one of its name among its siblings; "multiple instances of a nested policy are indexed from 1", counting only the
 * siblings of that name. (The page's 2020 revision wrote `choose[3]/when[2]`.)
 */
export function lastErrorSteps(children: readonly XmlElement[]): string[] {
  const total = new Map<string, number>();
  for (const c of children) total.set(c.name, (total.get(c.name) ?? 0) + 1);
  const seen = new Map<string, number>();
  return children.map((c) => {
    const n = (seen.get(c.name) ?? 0) + 1;
    seen.set(c.name, n);
    return total.get(c.name)! > 1 ? `${c.name}[${n}]` : c.name;
  });
}

/** `parent\step`: how LastError.Path joins its steps. */
export const lastErrorPath = (parent: string, step: string): string =>
  parent === '' ? step : `${parent}\\${step}`;
