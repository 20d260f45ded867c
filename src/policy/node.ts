/**
 * A validated element of a policy document, handed to an element's `compile`. Attribute and text values are
 * already checked against the declaration: literals are parsed once, expressions compiled once, and both are
 * exposed as getters so the element's closure never looks at XML again.
 */
import { type CompiledExpression, toBoolean, toDotNetString, toInt32 } from '../expr/index.js';
import type { Flow, RunContext, Statement } from './runtime.js';
import type { XmlElement } from './xml.js';

export type Getter<T> = (run: RunContext) => T;

export type Literal = string | number | boolean;

export type ValueSource =
  | { readonly kind: 'literal'; readonly value: Literal; readonly text: string }
  | { readonly kind: 'expression'; readonly expression: CompiledExpression; readonly text: string };

export interface Location {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export class PolicyNode {
  /** Compiled statements of `policies` content (choose/when, retry …); empty otherwise. */
  statements: readonly Statement[] = [];
  /** For a child declared `policy: true`: the compiled statement of that element. */
  statement: Statement | undefined;

  constructor(
    readonly name: string,
    /** Diagnostic path, e.g. `policies/inbound/choose[1]/when[2]`. */
    readonly path: string,
    /** LastError.Path, e.g. `choose[1]\when[2]`. */
    readonly errorPath: string,
    readonly location: Location,
    readonly xml: XmlElement,
    readonly attributes: ReadonlyMap<string, ValueSource>,
    readonly content: ValueSource | undefined,
    readonly children: readonly PolicyNode[],
  ) {}

  get id(): string {
    const v = this.attributes.get('id');
    return v?.kind === 'literal' ? String(v.value) : '';
  }

  has(name: string): boolean {
    return this.attributes.has(name);
  }

  /** The value when it is a literal (or the default), undefined when absent or an expression. */
  literal(name: string): Literal | undefined {
    const v = this.attributes.get(name);
    return v?.kind === 'literal' ? v.value : undefined;
  }

  isExpression(name: string): boolean {
    return this.attributes.get(name)?.kind === 'expression';
  }

  string(name: string): Getter<string> | undefined {
    const v = this.attributes.get(name);
    return v === undefined ? undefined : stringGetter(v);
  }

  int(name: string): Getter<number> | undefined {
    const v = this.attributes.get(name);
    return v === undefined ? undefined : intGetter(v, `${this.name}/@${name}`);
  }

  number(name: string): Getter<number> | undefined {
    const v = this.attributes.get(name);
    return v === undefined ? undefined : numberGetter(v, `${this.name}/@${name}`);
  }

  bool(name: string): Getter<boolean> | undefined {
    const v = this.attributes.get(name);
    return v === undefined ? undefined : boolGetter(v, `${this.name}/@${name}`);
  }

  /** The element's text as a getter (an expression or literal text), or undefined when empty. */
  text(): Getter<string> | undefined {
    return this.content === undefined ? undefined : stringGetter(this.content);
  }

  child(name: string): PolicyNode | undefined {
    return this.children.find((c) => c.name === name);
  }

  childrenNamed(name: string): PolicyNode[] {
    return this.children.filter((c) => c.name === name);
  }
}

export function stringGetter(v: ValueSource): Getter<string> {
  if (v.kind === 'literal') {
    const s = String(v.value);
    return () => s;
  }
  const e = v.expression;
  return (run) => toDotNetString(e.evaluate(run.context));
}

/** A raw expression result, for elements that keep the runtime value (set-variable, cache-store-value). */
export function valueGetter(v: ValueSource): Getter<unknown> {
  if (v.kind === 'literal') {
    const s = String(v.value);
    return () => s;
  }
  const e = v.expression;
  return (run) => e.evaluate(run.context);
}

function intGetter(v: ValueSource, what: string): Getter<number> {
  if (v.kind === 'literal') {
    const n = Number(v.value);
    return () => n;
  }
  const e = v.expression;
  return (run) => {
    const r = e.evaluate(run.context);
    if (typeof r === 'string') {
      if (!/^\s*[-+]?\d+\s*$/.test(r)) throw new TypeError(`${what} must be an integer, got "${r}"`);
      return Number.parseInt(r, 10);
    }
    return toInt32(r);
  };
}

function numberGetter(v: ValueSource, what: string): Getter<number> {
  if (v.kind === 'literal') {
    const n = Number(v.value);
    return () => n;
  }
  const e = v.expression;
  return (run) => {
    const r = e.evaluate(run.context);
    const n = typeof r === 'number' ? r : Number(toDotNetString(r));
    if (!Number.isFinite(n)) throw new TypeError(`${what} must be a number, got "${toDotNetString(r)}"`);
    return n;
  };
}

function boolGetter(v: ValueSource, what: string): Getter<boolean> {
  if (v.kind === 'literal') {
    const b = v.value === true;
    return () => b;
  }
  const e = v.expression;
  return (run) => {
    const r = e.evaluate(run.context);
    if (typeof r === 'string') {
      const t = r.trim().toLowerCase();
      if (t === 'true') return true;
      if (t === 'false') return false;
      throw new TypeError(`${what} must be true or false, got "${r}"`);
    }
    return toBoolean(r);
  };
}

/** Runs statements in order; stops at the first that responds. Avoids an await per synchronous statement. */
export function sequence(statements: readonly Statement[]): Statement {
  if (statements.length === 0) return () => 'next';
  if (statements.length === 1) return statements[0]!;
  return (run) => {
    for (let i = 0; i < statements.length; i++) {
      const flow = statements[i]!(run);
      if (flow instanceof Promise) return continueAsync(flow, statements, i + 1, run);
      if (flow === 'respond') return 'respond';
    }
    return 'next';
  };
}

async function continueAsync(
  pending: Promise<Flow>,
  statements: readonly Statement[],
  from: number,
  run: RunContext,
): Promise<Flow> {
  if ((await pending) === 'respond') return 'respond';
  for (let i = from; i < statements.length; i++) {
    if ((await statements[i]!(run)) === 'respond') return 'respond';
  }
  return 'next';
}
