/**
 * Policy documents: reading (named values, tolerant XML, positions), checking every element against its
 * declaration, and compiling each statement into a closure — once, at load time.
 */
import { compileExpression, ExpressionError } from '../expr/index.js';
import { didYouMean, type PolicyDiagnostic, PolicyLoadError, shown } from './diagnostics.js';
import type { CompileContext, ElementDefinition, MessageTarget } from './element.js';
import { DECLARED, ELEMENTS } from './elements/index.js';
import { type Location, type NodeSite, PolicyNode, sequence, type ValueSource } from './node.js';
import { type Flow, PolicyError, type Statement, StatementFailure, type StatementSite } from './runtime.js';
import { findExpressionEnd, ScanError } from './scanner.js';
import {
  type AttributeSpec,
  type ChildSpec,
  type ContentSpec,
  type Scope,
  SECTIONS,
  type Section,
} from './schema.js';
import type { PolicyObserver } from './services.js';
import { type NamedValues, PolicySource } from './source.js';
import { parseXml, type XmlElement, XmlError, type XmlText } from './xml.js';

export interface ReadOptions {
  /** Shown in every diagnostic. */
  readonly file: string;
  readonly namedValues?: NamedValues;
}

/** A parsed (not yet compiled) `<policies>` or `<fragment>` document. */
export interface PolicyDocument {
  readonly file: string;
  readonly kind: 'policies' | 'fragment';
  readonly root: XmlElement;
  readonly source: PolicySource;
}

/** What a statement needs the transport to deliver. */
export interface StatementNeeds {
  requestBody: boolean;
  responseBody: boolean;
  responseHeaders: boolean;
  /** Watch the response body as it passes (see ElementDefinition.watchesResponseBody). */
  responseStream: boolean;
}

/** One element a statement runs (itself or nested in it: a `when`, an included fragment), where it was written. */
export interface ElementUse {
  readonly element: string;
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** Its attributes as written (expressions unevaluated). */
  readonly attributes: Readonly<Record<string, string>>;
  /** The names of the attributes of its child elements that are not policies (quota's `<api>`, …). */
  readonly childAttributes: readonly string[];
  /** The message it works on: the request, the response, or the response return-response builds. */
  readonly target: MessageTarget;
}

export type SectionItem =
  | { readonly kind: 'base' }
  | {
      readonly kind: 'statement';
      readonly run: Statement;
      readonly needs: StatementNeeds;
      readonly element: string;
      /** Every element the statement runs, itself first: what a transport that cannot do everything checks. */
      readonly uses: readonly ElementUse[];
    };

/** A `<policies>` document compiled for one scope; sections keep their `<base />` markers for stitching. */
export interface CompiledDocument {
  readonly file: string;
  readonly scope: Scope;
  readonly sections: ReadonlyMap<Section, readonly SectionItem[]>;
}

export type FragmentResolver = (fragmentId: string) => PolicyDocument | undefined;

export interface CompileOptions {
  readonly scope: Scope;
  readonly fragments?: FragmentResolver;
  /**
   * The ids of the gateway's certificate store (tls.certificates), when the document is compiled for a
   * configuration: a certificate-id naming none of them is a load error. Absent (a policy file checked alone):
   * not checked here, the engine refuses it at run time.
   */
  readonly certificateIds?: ReadonlySet<string>;
}

/** Reads a document; throws PolicyLoadError for XML problems and named values nobody defined. */
export function readPolicyDocument(text: string, options: ReadOptions): PolicyDocument {
  const source = new PolicySource(options.file, text, options.namedValues);
  const diag = (offset: number, code: PolicyDiagnostic['code'], message: string): PolicyDiagnostic => ({
    file: options.file,
    ...source.position(offset),
    path: '',
    code,
    message: source.redact(message),
  });
  let root: XmlElement;
  try {
    root = parseXml(source);
  } catch (err) {
    if (err instanceof XmlError) throw new PolicyLoadError([diag(err.offset, err.code, err.message)]);
    throw err;
  }
  const problems: PolicyDiagnostic[] = [];
  if (root.name !== 'policies' && root.name !== 'fragment') {
    problems.push(
      diag(
        root.offset,
        'unknown-element',
        `the root element must be <policies> or <fragment>, got <${root.name}>`,
      ),
    );
  }
  // Liquid templates use `{{ … }}` too; an undefined name inside a Liquid body is Liquid's, not ours.
  const liquid = liquidRanges(root);
  for (const m of source.missing) {
    if (liquid.some(([from, to]) => m.offset >= from && m.offset < to)) continue;
    problems.push(diag(m.offset, 'named-value', `named value "${m.name}" is not defined`));
  }
  if (problems.length > 0) throw new PolicyLoadError(problems);
  return { file: options.file, kind: root.name === 'fragment' ? 'fragment' : 'policies', root, source };
}

function liquidRanges(root: XmlElement): [number, number][] {
  const out: [number, number][] = [];
  const walk = (e: XmlElement): void => {
    if (e.name === 'set-body' && e.attributes.some((a) => a.name === 'template' && a.value === 'liquid')) {
      out.push([e.contentStart, e.contentEnd]);
      return;
    }
    for (const c of e.children) if (c.kind === 'element') walk(c);
  };
  walk(root);
  return out;
}

/** Compiles a `<policies>` document for one scope; throws PolicyLoadError listing every problem found. */
export function compilePolicyDocument(doc: PolicyDocument, options: CompileOptions): CompiledDocument {
  if (doc.kind !== 'policies') {
    const p = doc.source.position(doc.root.offset);
    throw new PolicyLoadError([
      {
        file: doc.file,
        ...p,
        path: 'fragment',
        code: 'fragment',
        message: 'a <fragment> is not a policy document: include it with <include-fragment fragment-id="…"/>',
      },
    ]);
  }
  const compiler = new DocumentCompiler(doc, options, []);
  const sections = compiler.compileRoot();
  if (compiler.diagnostics.length > 0) throw new PolicyLoadError(compiler.diagnostics);
  return { file: doc.file, scope: options.scope, sections };
}

/** Checks a fragment on its own (for `portcullis validate`): statements must be valid in some section. */
export function checkFragment(doc: PolicyDocument, options: CompileOptions): readonly PolicyDiagnostic[] {
  const compiler = new DocumentCompiler(doc, options, []);
  compiler.compileFragmentAlone();
  return compiler.diagnostics;
}

const SECTION_NAMES: readonly string[] = SECTIONS;

class DocumentCompiler {
  readonly diagnostics: PolicyDiagnostic[];
  private needs: StatementNeeds = {
    requestBody: false,
    responseBody: false,
    responseHeaders: false,
    responseStream: false,
  };
  private uses: ElementUse[] = [];

  constructor(
    private readonly doc: PolicyDocument,
    private readonly options: CompileOptions,
    diagnostics: PolicyDiagnostic[],
    private readonly inFragment = false,
  ) {
    this.diagnostics = diagnostics;
  }

  compileRoot(): Map<Section, readonly SectionItem[]> {
    const sections = new Map<Section, readonly SectionItem[]>();
    this.rejectText(this.doc.root, 'policies');
    for (const el of elementChildren(this.doc.root)) {
      const path = `policies/${el.name}`;
      if (!SECTION_NAMES.includes(el.name)) {
        this.report(
          el.offset,
          'policies',
          'unknown-element',
          `<policies> holds only inbound, backend, outbound and on-error, got <${el.name}>${didYouMean(el.name, SECTION_NAMES)}`,
        );
        continue;
      }
      const section = el.name as Section;
      if (sections.has(section)) {
        this.report(el.offset, path, 'misplaced-element', `section <${section}> appears more than once`);
        continue;
      }
      for (const a of el.attributes) {
        this.report(a.offset, path, 'unknown-attribute', `a section has no attributes, got "${a.name}"`);
      }
      this.rejectText(el, path);
      sections.set(section, this.compileSection(el, section, path));
    }
    return sections;
  }

  compileFragmentAlone(): void {
    if (this.doc.kind !== 'fragment') return;
    // A fragment is checked as if included in inbound; section-specific mistakes show where it is included.
    this.compileStatements(this.doc.root, 'inbound', 'fragment', '', this.targetFor('inbound'));
  }

  private compileSection(el: XmlElement, section: Section, path: string): SectionItem[] {
    const items: SectionItem[] = [];
    let baseSeen = false;
    let index = 0;
    const once = new Set<string>();
    const children = elementChildren(el);
    const steps = lastErrorSteps(children);
    for (const child of children) {
      index++;
      const childPath = `${path}/${child.name}[${index}]`;
      if (child.name === 'base') {
        if (baseSeen) {
          this.report(child.offset, childPath, 'base', '<base /> may appear at most once per section');
          continue;
        }
        baseSeen = true;
        this.checkBase(child, childPath);
        items.push({ kind: 'base' });
        continue;
      }
      this.needs = { requestBody: false, responseBody: false, responseHeaders: false, responseStream: false };
      this.uses = [];
      const run = this.compileElement(
        child,
        section,
        childPath,
        steps[index - 1]!,
        this.targetFor(section),
        once,
      );
      if (run !== undefined)
        items.push({ kind: 'statement', run, needs: this.needs, element: child.name, uses: this.uses });
    }
    return items;
  }

  private checkBase(el: XmlElement, path: string): void {
    for (const a of el.attributes) {
      this.report(a.offset, path, 'unknown-attribute', `<base /> takes no attributes, got "${a.name}"`);
    }
    if (el.children.length > 0) this.report(el.offset, path, 'children', '<base /> must be empty');
  }

  private targetFor(section: Section): MessageTarget {
    return section === 'inbound' || section === 'backend' ? 'request' : 'response';
  }

  /** Compiles the policy statements inside `el` (a section body, a `when`, a fragment …) into one closure. */
  private compileStatements(
    el: XmlElement,
    section: Section,
    path: string,
    errorPath: string,
    target: MessageTarget,
  ): Statement[] {
    const out: Statement[] = [];
    let index = 0;
    const once = new Set<string>();
    this.rejectText(el, path);
    const children = elementChildren(el);
    const steps = lastErrorSteps(children);
    for (const child of children) {
      index++;
      const childPath = path === '' ? `${child.name}[${index}]` : `${path}/${child.name}[${index}]`;
      const childErrorPath = lastErrorPath(errorPath, steps[index - 1]!);
      if (child.name === 'base') {
        const why = this.inFragment
          ? 'a fragment cannot contain <base />'
          : '<base /> belongs directly in a section';
        this.report(child.offset, childPath, 'base', why);
        continue;
      }
      const run = this.compileElement(child, section, childPath, childErrorPath, target, once);
      if (run !== undefined) out.push(run);
    }
    return out;
  }

  private compileElement(
    el: XmlElement,
    section: Section,
    path: string,
    errorPath: string,
    target: MessageTarget,
    once: Set<string>,
  ): Statement | undefined {
    const def = ELEMENTS.get(el.name);
    if (def === undefined) {
      const declared = DECLARED.get(el.name);
      if (declared !== undefined) {
        const u = declared.unavailable;
        if (u === 'not-implemented') {
          this.report(el.offset, path, 'not-implemented', `"${el.name}" is not implemented yet`);
        } else {
          this.report(
            el.offset,
            path,
            'not-supported',
            `"${el.name}" is not supported: needs Azure ${u.azure}`,
          );
        }
      } else {
        const known = [...ELEMENTS.keys(), ...DECLARED.keys()];
        this.report(
          el.offset,
          path,
          'unknown-element',
          `unknown policy element <${el.name}>${didYouMean(el.name, known)}`,
        );
      }
      return undefined;
    }
    if (!def.sections.includes(section)) {
      this.report(
        el.offset,
        path,
        'misplaced-element',
        `<${el.name}> is not allowed in the ${section} section (allowed: ${def.sections.join(', ')}), got it in ${section}`,
      );
      return undefined;
    }
    const scope = this.options.scope;
    if (!def.scopes.includes(scope)) {
      this.report(
        el.offset,
        path,
        'misplaced-element',
        `<${el.name}> is not allowed at ${scope} scope (allowed: ${def.scopes.join(', ')}), got it at ${scope} scope`,
      );
      return undefined;
    }
    if (def.oncePerSection === true) {
      if (once.has(el.name)) {
        this.report(el.offset, path, 'misplaced-element', `<${el.name}> may appear only once per section`);
        return undefined;
      }
      once.add(el.name);
    }
    this.uses.push({
      element: el.name,
      file: this.doc.file,
      ...this.doc.source.position(el.offset),
      attributes: Object.fromEntries(el.attributes.map((a) => [a.name, a.value])),
      childAttributes: elementChildren(el).flatMap((child) => child.attributes.map((a) => a.name)),
      target,
    });
    if (def.touchesResponse === true) this.needs.responseHeaders = true;
    if (def.watchesResponseBody === true) this.needs.responseStream = true;
    if (def.body !== undefined && (target === 'request' || target === 'response')) {
      if (target === 'request') this.needs.requestBody = true;
      else this.needs.responseBody = true;
    }
    const before = this.diagnostics.length;
    const node = this.buildNode(el, def.attributes, def.content, section, path, errorPath, target);
    if (this.diagnostics.length > before) return undefined;
    const context = this.compileContext(section, target);
    let inner: Statement;
    try {
      inner = def.compile(node, context);
    } catch (err) {
      this.report(el.offset, path, 'attribute', err instanceof Error ? err.message : String(err));
      return undefined;
    }
    if (this.diagnostics.length > before) return undefined;
    const site: StatementSite = {
      element: el.name,
      scope,
      section,
      path: errorPath,
      policyId: node.id,
      location: node.location,
    };
    return annotate(inner, site);
  }

  private compileContext(section: Section, target: MessageTarget): CompileContext {
    return {
      section,
      scope: this.options.scope,
      target,
      error: (node, code, message) => {
        this.diagnostics.push({
          file: node.location.file,
          line: node.location.line,
          column: node.location.column,
          path: node.path,
          code,
          message: this.doc.source.redact(message),
        });
      },
      includeFragment: (fragmentId, at) => this.includeFragment(fragmentId, at, section, target),
      readsRequestBody: () => {
        this.needs.requestBody = true;
      },
      ...(this.options.certificateIds ? { certificateIds: this.options.certificateIds } : {}),
    };
  }

  private includeFragment(
    fragmentId: string,
    at: NodeSite,
    section: Section,
    target: MessageTarget,
  ): Statement | undefined {
    const fail = (message: string): undefined => {
      this.diagnostics.push({ ...at.location, path: at.path, code: 'fragment', message });
      return undefined;
    };
    if (this.inFragment) return fail('a fragment cannot include another fragment');
    const doc = this.options.fragments?.(fragmentId);
    if (doc === undefined) return fail(`fragment "${fragmentId}" is not defined`);
    if (doc.kind !== 'fragment') return fail(`"${fragmentId}" is a <policies> document, not a <fragment>`);
    const sub = new DocumentCompiler(doc, this.options, this.diagnostics, true);
    sub.needs = this.needs;
    sub.uses = this.uses;
    const before = this.diagnostics.length;
    const statements = sub.compileStatements(doc.root, section, 'fragment', '', target);
    return this.diagnostics.length > before ? undefined : sequence(statements);
  }

  /** Validates attributes and content of one element against a declaration. */
  private buildNode(
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
        this.report(a.offset, path, 'unknown-attribute', `<${el.name}> has no attribute "${a.name}"${hint}`);
        continue;
      }
      const v = this.value(a.value, a.valueOffset, spec, `${el.name}/@${a.name}`, path);
      if (v !== undefined) attributes.set(a.name, v);
    }
    for (const [name, spec] of Object.entries(specs)) {
      if (attributes.has(name)) continue;
      if (spec.required === true && !present.has(name)) {
        this.report(
          el.offset,
          path,
          'attribute',
          `${el.name}/@${name} is required, got no "${name}" attribute`,
        );
      } else if (spec.default !== undefined) {
        attributes.set(name, { kind: 'literal', value: spec.default, text: String(spec.default) });
      }
    }
    let text: ValueSource | undefined;
    let children: PolicyNode[] = [];
    let statements: Statement[] = [];
    switch (content.kind) {
      case 'empty':
        this.rejectText(el, path);
        for (const c of elementChildren(el)) {
          this.report(c.offset, path, 'children', `<${el.name}> must be empty, got <${c.name}>`);
        }
        break;
      case 'text': {
        if (content.markup === true && elementChildren(el).length > 0) {
          // A body written as XML: the markup between the tags is the text, exactly as written.
          const raw = this.doc.source.text.slice(el.contentStart, el.contentEnd);
          text = { kind: 'literal', value: raw, text: raw };
          break;
        }
        for (const c of elementChildren(el)) {
          this.report(c.offset, path, 'children', `<${el.name}> holds text only, got <${c.name}>`);
        }
        const t = textChild(el);
        const raw = t?.value ?? '';
        if (raw.trim() === '') {
          if (content.required === true) {
            this.report(el.offset, path, 'children', `<${el.name}> must have a value, got an empty element`);
          }
          break;
        }
        const spec: AttributeSpec = { kind: 'string', expression: content.expression };
        const value = content.preserveWhitespace === true || isExpression(raw) ? raw : raw.trim();
        text = this.value(value, t!.offset, spec, `${el.name} text`, path);
        break;
      }
      case 'policies':
        statements = this.compileStatements(el, section, path, errorPath, target);
        break;
      case 'elements': {
        if (content.text !== true) this.rejectText(el, path);
        else {
          const t = textChild(el);
          if (t !== undefined && t.value.trim() !== '') {
            const v = isExpression(t.value) ? t.value : t.value.trim();
            text = this.value(v, t.offset, { kind: 'string', expression: true }, `${el.name} text`, path);
          }
        }
        children = this.buildChildren(el, content.elements, section, path, errorPath, target);
        break;
      }
      case 'any':
        break;
    }
    const node = new PolicyNode(
      el.name,
      path,
      errorPath,
      this.location(el.offset),
      el,
      attributes,
      text,
      children,
      specs,
    );
    node.statements = statements;
    return node;
  }

  private buildChildren(
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
        this.report(
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
        this.report(
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
        const node = this.policyChild(c, def, section, childPath, childErrorPath, childTarget);
        if (node !== undefined) out.push(node);
        continue;
      }
      const node = this.buildNode(
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
        this.report(
          el.offset,
          path,
          'children',
          `<${el.name}> needs at least ${spec.min} <${spec.name}>, got ${n}`,
        );
      }
    }
    return out;
  }

  /** A child that is a policy element in its own right (return-response ⊃ set-header): compiled with it. */
  private policyChild(
    el: XmlElement,
    def: ElementDefinition,
    section: Section,
    path: string,
    errorPath: string,
    target: MessageTarget,
  ): PolicyNode | undefined {
    const before = this.diagnostics.length;
    const node = this.buildNode(el, def.attributes, def.content, section, path, errorPath, target);
    if (this.diagnostics.length > before) return undefined;
    try {
      const site: StatementSite = {
        element: el.name,
        scope: this.options.scope,
        section,
        path: errorPath,
        policyId: node.id,
        location: node.location,
      };
      node.statement = annotate(def.compile(node, this.compileContext(section, target)), site);
    } catch (err) {
      this.report(el.offset, path, 'attribute', err instanceof Error ? err.message : String(err));
      return undefined;
    }
    return node;
  }

  /** Classifies, checks and (for an expression) compiles one attribute value or text. */
  private value(
    raw: string,
    offset: number,
    spec: AttributeSpec,
    what: string,
    path: string,
  ): ValueSource | undefined {
    const trimmed = raw.trim();
    if (isExpression(trimmed)) {
      if (!spec.expression) {
        this.report(
          offset,
          path,
          'attribute',
          `${what} does not allow policy expressions, got "${shown(trimmed)}"`,
        );
        return undefined;
      }
      let end: number;
      try {
        end = findExpressionEnd(trimmed, 0, false);
      } catch (err) {
        if (err instanceof ScanError) {
          this.report(offset, path, 'expression', `${what}: ${err.message}, got "${shown(trimmed)}"`);
          return undefined;
        }
        throw err;
      }
      if (end !== trimmed.length) {
        this.report(
          offset,
          path,
          'expression',
          `${what}: an expression must be the whole value, got "${shown(trimmed.slice(end))}" after it`,
        );
        return undefined;
      }
      const lead = raw.length - raw.trimStart().length;
      const origin = { file: this.doc.file, ...this.doc.source.position(offset + lead + 2) };
      try {
        const expression = compileExpression(trimmed.slice(2, -1), {
          kind: trimmed[1] === '(' ? 'expression' : 'block',
          origin,
        });
        this.noteReferences(expression.references);
        return { kind: 'expression', expression, text: trimmed };
      } catch (err) {
        if (err instanceof ExpressionError) {
          this.diagnostics.push({
            file: this.doc.file,
            line: err.line ?? origin.line,
            column: err.column ?? origin.column,
            path,
            code: 'expression',
            message: this.doc.source.redact(`${what}: ${err.reason}`),
          });
          return undefined;
        }
        throw err;
      }
    }
    const bad = (rule: string): undefined => {
      this.report(offset, path, 'attribute', `${what} ${rule}, got "${shown(raw)}"`);
      return undefined;
    };
    switch (spec.kind) {
      case 'string':
        return { kind: 'literal', value: raw, text: raw };
      case 'int': {
        if (!/^[-+]?\d+$/.test(trimmed)) return bad('must be an integer');
        const n = Number.parseInt(trimmed, 10);
        if (spec.min !== undefined && n < spec.min) return bad(`must be at least ${spec.min}`);
        if (spec.max !== undefined && n > spec.max) return bad(`must be at most ${spec.max}`);
        return { kind: 'literal', value: n, text: trimmed };
      }
      case 'number': {
        const n = Number(trimmed);
        if (trimmed === '' || !Number.isFinite(n)) return bad('must be a number');
        if (spec.min !== undefined && n < spec.min) return bad(`must be at least ${spec.min}`);
        if (spec.max !== undefined && n > spec.max) return bad(`must be at most ${spec.max}`);
        return { kind: 'literal', value: n, text: trimmed };
      }
      case 'bool': {
        // .NET's bool.Parse is case-insensitive.
        const t = trimmed.toLowerCase();
        if (t !== 'true' && t !== 'false') return bad('must be true or false');
        return { kind: 'literal', value: t === 'true', text: trimmed };
      }
      case 'enum': {
        const values = spec.values ?? [];
        if (!values.includes(trimmed)) return bad(`must be one of ${values.join(', ')}`);
        return { kind: 'literal', value: trimmed, text: trimmed };
      }
    }
  }

  private noteReferences(refs: ReadonlySet<string>): void {
    for (const r of refs) {
      if (r === '*') {
        this.needs.requestBody = true;
        this.needs.responseBody = true;
        // `Request.*` / `Response.*`: the whole message escaped (e.g. stored in a variable), so its body may be read.
      } else if (r === 'Request.*' || r.startsWith('Request.Body')) this.needs.requestBody = true;
      else if (r === 'Response.*' || r.startsWith('Response.Body')) this.needs.responseBody = true;
    }
  }

  private rejectText(el: XmlElement, path: string): void {
    for (const c of el.children) {
      if (c.kind === 'text' && c.value.trim() !== '') {
        this.report(
          c.offset,
          path,
          'children',
          `<${el.name}> holds elements only, got text "${shown(c.value, 40)}"`,
        );
        return;
      }
    }
  }

  private location(offset: number): Location {
    return { file: this.doc.file, ...this.doc.source.position(offset) };
  }

  private report(offset: number, path: string, code: PolicyDiagnostic['code'], message: string): void {
    this.diagnostics.push({ ...this.location(offset), path, code, message: this.doc.source.redact(message) });
  }
}

/**
 * The steps of `context.LastError.Path` for these siblings, as "Error handling in API Management policies" (2025
 * revision) writes it — `choose\otherwise\choose[3]\when[2]`: an element is named alone when it is the only
 * one of its name among its siblings; "multiple instances of a nested policy are indexed from 1", counting only the
 * siblings of that name. (The page's 2020 revision wrote `choose[3]/when[2]`.)
 */
function lastErrorSteps(children: readonly XmlElement[]): string[] {
  const total = new Map<string, number>();
  for (const c of children) total.set(c.name, (total.get(c.name) ?? 0) + 1);
  const seen = new Map<string, number>();
  return children.map((c) => {
    const n = (seen.get(c.name) ?? 0) + 1;
    seen.set(c.name, n);
    return total.get(c.name)! > 1 ? `${c.name}[${n}]` : c.name;
  });
}

const lastErrorPath = (parent: string, step: string): string => (parent === '' ? step : `${parent}\\${step}`);

function elementChildren(el: XmlElement): XmlElement[] {
  return el.children.filter((c): c is XmlElement => c.kind === 'element');
}

function textChild(el: XmlElement): XmlText | undefined {
  const texts = el.children.filter(
    (c): c is XmlText => c.kind === 'text' && (c.cdata || c.value.trim() !== ''),
  );
  if (texts.length <= 1) return texts[0];
  return { kind: 'text', value: texts.map((t) => t.value).join(''), offset: texts[0]!.offset, cdata: false };
}

/** An attribute or text that is a policy expression (`@(…)`, `@{…}`): its value is known only per request. */
export function isExpression(text: string): boolean {
  const t = text.trimStart();
  return t.startsWith('@(') || t.startsWith('@{');
}

/** Wraps a compiled statement so a failure carries where it happened and every outcome is counted. */
function annotate(inner: Statement, site: StatementSite): Statement {
  const fail = (err: unknown, run: Parameters<Statement>[0]): never => {
    if (err instanceof StatementFailure) throw err;
    const reason =
      err instanceof PolicyError ? err.reason : err instanceof ExpressionError ? err.code : 'Failure';
    run.services.counters.count(site.element, err instanceof PolicyError ? 'refused' : 'failed', reason);
    throw new StatementFailure(err, site);
  };
  return (run) => {
    const observer = run.services.observer;
    if (observer?.observes(run)) return observed(inner, site, run, observer, fail);
    try {
      const flow = inner(run);
      if (flow instanceof Promise) {
        return flow.then(
          (f) => {
            run.services.counters.count(site.element, 'allowed');
            return f;
          },
          (err: unknown) => fail(err, run),
        );
      }
      run.services.counters.count(site.element, 'allowed');
      return flow;
    } catch (err) {
      return fail(err, run);
    }
  };
}

/**
 * The same statement told to an observer (a test run, a traced request): when it starts and how it ends. Apart
 * from the fast path so a request nobody observes pays one property read; synchronous when the statement is (the
 * children of send-request and return-response must be).
 */
function observed(
  inner: Statement,
  site: StatementSite,
  run: Parameters<Statement>[0],
  observer: PolicyObserver,
  fail: (err: unknown, run: Parameters<Statement>[0]) => never,
): Flow | Promise<Flow> {
  const failed = (err: unknown): never => {
    observer.statementEnded(site, run, err instanceof PolicyError ? 'refused' : 'failed', err);
    return fail(err, run);
  };
  const ended = (flow: Flow): Flow => {
    run.services.counters.count(site.element, 'allowed');
    observer.statementEnded(site, run, flow);
    return flow;
  };
  observer.statementStarted(site, run);
  let flow: Flow | Promise<Flow>;
  try {
    flow = observer.inStatement ? observer.inStatement(site, run, () => inner(run)) : inner(run);
  } catch (err) {
    return failed(err);
  }
  return flow instanceof Promise ? flow.then(ended, failed) : ended(flow);
}
