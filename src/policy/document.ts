/**
 * Policy documents: reading (named values, tolerant XML, positions) and compiling each statement into a closure —
 * once, at load time. Checking an element against its declaration is node-checks.ts; its values, values.ts.
 */
import { ExpressionError } from '../expr/index.js';
import { didYouMean, type PolicyDiagnostic, PolicyLoadError } from './diagnostics.js';
import type { CompileContext, ElementDefinition, MessageTarget } from './element.js';
import { DECLARED, ELEMENTS } from './elements/index.js';
import { type Location, type NodeSite, type PolicyNode, sequence } from './node.js';
import { buildNode, lastErrorPath, lastErrorSteps, type NodeContext, rejectText } from './node-checks.js';
import { type Flow, PolicyError, type Statement, StatementFailure, type StatementSite } from './runtime.js';
import { type Scope, SECTIONS, type Section } from './schema.js';
import type { PolicyObserver } from './services.js';
import type { XsdDocument } from './shared/xml-schema.js';
import { type NamedValues, PolicySource } from './source.js';
import { elementChildren, parseXml, type XmlElement, XmlError } from './xml.js';

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
  /** Told of each certificate of the store an element can use (CompileContext.usesCertificate). */
  readonly usesCertificate?: (id: string | undefined) => void;
  /**
   * The gateway's schema registry (`schemas:`), when the document is compiled for a configuration: validate-content's
   * `schema-id` names one of them. Absent (a policy file checked alone): not checked, and not found at run time.
   */
  readonly schemas?: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  /** The registry's XML schemas (XSD) by id, for validate-content's `validate-as="xml"` / `"soap"`. */
  readonly xmlSchemas?: ReadonlyMap<string, XsdDocument>;
  /**
   * Elements left out wherever they are written, nested ones included, as if absent: what an API inherits of a
   * document that its operation cannot run (API Management skips them at run time; a WebSocket API's onHandshake).
   */
  readonly skipElements?: ReadonlySet<string> | ReadonlyMap<string, unknown>;
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
  /** What the node checks and value compilation reach of this compiler. */
  private readonly at: NodeContext;

  constructor(
    private readonly doc: PolicyDocument,
    private readonly options: CompileOptions,
    diagnostics: PolicyDiagnostic[],
    private readonly inFragment = false,
  ) {
    this.diagnostics = diagnostics;
    this.at = {
      file: doc.file,
      source: doc.source,
      report: (offset, path, code, message) => this.report(offset, path, code, message),
      diagnose: (diagnostic) => this.diagnostics.push(diagnostic),
      noteReferences: (references) => this.noteReferences(references),
      compileStatements: (el, section, path, errorPath, target) =>
        this.compileStatements(el, section, path, errorPath, target),
      policyChild: (el, def, section, path, errorPath, target) =>
        this.policyChild(el, def, section, path, errorPath, target),
    };
  }

  compileRoot(): Map<Section, readonly SectionItem[]> {
    const sections = new Map<Section, readonly SectionItem[]>();
    rejectText(this.at, this.doc.root, 'policies');
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
      rejectText(this.at, el, path);
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
    rejectText(this.at, el, path);
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
    if (this.options.skipElements?.has(el.name) === true) return undefined;
    const def = ELEMENTS.get(el.name);
    if (def === undefined) {
      const declared = DECLARED.get(el.name);
      if (declared !== undefined) {
        const u = declared.unavailable;
        if ('missing' in u) {
          this.report(el.offset, path, 'not-implemented', `"${el.name}" is not implemented: ${u.missing}`);
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
    const node = buildNode(this.at, el, def.attributes, def.content, section, path, errorPath, target);
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
      readsResponseBody: () => {
        this.needs.responseHeaders = true;
        this.needs.responseBody = true;
      },
      usesCertificate: (id) => this.options.usesCertificate?.(id),
      ...(this.options.certificateIds ? { certificateIds: this.options.certificateIds } : {}),
      ...(this.options.schemas ? { schemas: this.options.schemas } : {}),
      ...(this.options.xmlSchemas ? { xmlSchemas: this.options.xmlSchemas } : {}),
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
    const node = buildNode(this.at, el, def.attributes, def.content, section, path, errorPath, target);
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

  private location(offset: number): Location {
    return { file: this.doc.file, ...this.doc.source.position(offset) };
  }

  private report(offset: number, path: string, code: PolicyDiagnostic['code'], message: string): void {
    this.diagnostics.push({ ...this.location(offset), path, code, message: this.doc.source.redact(message) });
  }
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
