/**
 * Compiles the syntax tree into nested closures `(rt, frame) => value`. Name resolution, type names, member names
 * and the shape of every statement are settled here, once; evaluation only runs closures. Locals live in frame
 * arrays (slot 0 holds the enclosing frame, for lambdas and local functions).
 */
import { didYouMean } from '../../diagnostic.js';
import { ExpressionError, locate } from '../errors.js';
import { type ExpressionLimits, resolveLimits } from '../limits.js';
import '../library/index.js';
import type { PolicyContext } from '../context.js';
import type { CompiledExpression, ExpressionKind } from '../index.js';
import type { SourceOrigin } from '../origin.js';
import {
  add,
  compare,
  divide,
  equals,
  multiply,
  negate,
  remainder,
  subtract,
  toBoolean,
  toDotNetStringRt,
} from '../runtime/convert.js';
import {
  ArgumentRefusal,
  type ConstantArgsCheck,
  CsException,
  type CsType,
  checkSize,
  checkStringLength,
  enumerate,
  findIndexer,
  findMethod,
  findProperty,
  KNOWN_MEMBERS,
  LimitError,
  type Method,
  nullRef,
  type Rt,
  step,
  TYPES_BY_NAME,
  type TypeInfo,
  typeName,
  typeOf,
  UNKNOWN_ARG,
} from '../runtime/core.js';
import { parseDecimalText } from '../runtime/decimal.js';
import { CsEnum } from '../runtime/enum.js';
import { CsChar, CsDouble } from '../runtime/values.js';
import type { Arg, Expr, Stmt, TypeRef } from '../syntax/ast.js';
import { DepthError, ParseError, parseBlockText, parseExpressionText } from '../syntax/parser.js';
import {
  CsAnon,
  castValue,
  convertImplicit,
  defaultOf,
  exceptionMatches,
  isInstance,
  makeArray,
  OutRef,
  wrapJsError,
} from './support.js';

type Frame = unknown[];
type Code = (rt: EvalRt, f: Frame) => unknown;
type StmtCode = (rt: EvalRt, f: Frame) => Signal;

interface EvalRt extends Rt {
  ret: unknown;
  depth: number;
}

const BREAK = 1;
const CONTINUE = 2;
const RETURN = 3;
type Signal = undefined | 1 | 2 | 3;

/** Marks a null-conditional short-circuit travelling up a member/call/index chain. */
const SHORT = Symbol('short');

const MAX_CALL_DEPTH = 64;

class CompileError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

interface Local {
  slot: number;
  type: CsType | null;
  /** Local functions: invoked directly by name. */
  isFunction?: boolean;
}

/** One function body (top level, lambda or local function): its frame layout and block scopes. */
class FnScope {
  slots = 1;
  readonly blocks: Map<string, Local>[] = [new Map()];
  constructor(readonly parent: FnScope | null) {}
  declare(name: string, type: CsType | null, pos: number, isFunction = false): Local {
    for (const b of this.blocks) {
      if (b.has(name)) {
        throw new CompileError(`a local variable named '${name}' is already defined in this scope`, pos);
      }
    }
    const local: Local = { slot: this.slots++, type, isFunction };
    this.blocks[this.blocks.length - 1]!.set(name, local);
    return local;
  }
  push(): void {
    this.blocks.push(new Map());
  }
  pop(): void {
    this.blocks.pop();
  }
}

interface Resolved {
  depth: number;
  local: Local;
}

type TypeOrNs = { kind: 'type'; type: CsType } | { kind: 'ns'; name: string };

const NAMESPACES = new Set([
  'System',
  'System.Text',
  'System.Linq',
  'System.Collections',
  'System.Collections.Generic',
  'System.Net',
  'System.Security',
  'System.Security.Cryptography',
  'System.Security.Cryptography.X509Certificates',
  'System.Text.RegularExpressions',
  'System.Xml',
  'System.Xml.Linq',
  'Newtonsoft',
  'Newtonsoft.Json',
  'Newtonsoft.Json.Linq',
  'System.IO',
  'System.Globalization',
]);

class Compiler {
  private fn: FnScope = new FnScope(null);
  readonly references = new Set<string>();

  constructor(readonly src: string) {}

  // ---- names ----
  private lookup(name: string): Resolved | null {
    let depth = 0;
    for (let s: FnScope | null = this.fn; s; s = s.parent, depth++) {
      for (let i = s.blocks.length - 1; i >= 0; i--) {
        const l = s.blocks[i]!.get(name);
        if (l) return { depth, local: l };
      }
    }
    return null;
  }

  private readLocal(r: Resolved): Code {
    const slot = r.local.slot;
    switch (r.depth) {
      case 0:
        return (_rt, f) => f[slot];
      case 1:
        return (_rt, f) => (f[0] as Frame)[slot];
      default: {
        const d = r.depth;
        return (_rt, f) => {
          let fr = f;
          for (let i = 0; i < d; i++) fr = fr[0] as Frame;
          return fr[slot];
        };
      }
    }
  }

  private writeLocal(r: Resolved): (f: Frame, v: unknown) => void {
    const slot = r.local.slot;
    const d = r.depth;
    const conv = r.local.type ? convertImplicit(r.local.type) : null;
    return (f, v) => {
      let fr = f;
      for (let i = 0; i < d; i++) fr = fr[0] as Frame;
      fr[slot] = conv ? conv(v) : v;
    };
  }

  resolveType(t: TypeRef): CsType {
    // Nullable<T> is T? (the name alone is the static class System.Nullable).
    if ((t.name === 'Nullable' || t.name === 'System.Nullable') && t.args.length === 1) {
      return this.resolveType({ ...t, ...t.args[0]!, nullable: true, arrayRank: t.arrayRank, pos: t.pos });
    }
    let info = TYPES_BY_NAME.get(t.name);
    if (!info && t.args.length) info = TYPES_BY_NAME.get(`${t.name}\`${t.args.length}`);
    if (!info) {
      throw new CompileError(`the type '${t.name}' is not available in policy expressions`, t.pos);
    }
    const args = t.args.map((a) => this.resolveType(a));
    const base: CsType = { info, args, arrayRank: 0, nullable: t.nullable };
    if (t.arrayRank === 0) return base;
    let cur = base;
    for (let i = 0; i < t.arrayRank; i++) {
      cur = { info: TYPES_BY_NAME.get('Array')!, args: [cur], arrayRank: 1, nullable: false };
    }
    return cur;
  }

  /** `System.Text.Encoding` / `Encoding` / `JObject` as written in a member chain, or null when not a type. */
  private typeOrNamespace(e: Expr): TypeOrNs | null {
    if (e.k === 'typeExpr') return { kind: 'type', type: this.resolveType(e.type) };
    let name: string;
    let typeArgs: TypeRef[] | undefined;
    if (e.k === 'name') {
      if (this.lookup(e.name) || e.name === 'context') return null;
      name = e.name;
      typeArgs = e.typeArgs;
    } else if (e.k === 'member' && !e.nullCond) {
      const inner = this.typeOrNamespace(e.target);
      if (inner?.kind !== 'ns') return null;
      name = `${inner.name}.${e.name}`;
      typeArgs = e.typeArgs;
    } else {
      return null;
    }
    if (TYPES_BY_NAME.has(name) || (typeArgs && TYPES_BY_NAME.has(`${name}\`${typeArgs.length}`))) {
      return {
        kind: 'type',
        type: this.resolveType({ name, args: typeArgs ?? [], arrayRank: 0, nullable: false, pos: e.pos }),
      };
    }
    if (NAMESPACES.has(name)) return { kind: 'ns', name };
    return null;
  }

  /** Member names of anonymous types this expression creates (`new { Name = … }.Name`). */
  private readonly anonNames = new Set<string>();

  private checkMemberName(name: string, pos: number): void {
    if (!KNOWN_MEMBERS.has(name) && !this.anonNames.has(name)) {
      throw new CompileError(
        `'${name}' is not a member available to policy expressions${didYouMean(name, [...KNOWN_MEMBERS, ...this.anonNames])}`,
        pos,
      );
    }
  }

  // ---- expressions ----
  expr(e: Expr): Code {
    const code = this.exprInChain(e, false);
    return code;
  }

  /** Compiles e; when `chained` is false and e ends a null-conditional chain, converts SHORT back to null. */
  private exprInChain(e: Expr, chained: boolean): Code {
    switch (e.k) {
      case 'member':
      case 'call':
      case 'index': {
        const code = e.k === 'member' ? this.member(e) : e.k === 'call' ? this.call(e) : this.index(e);
        if (chained || !hasNullCond(e)) return code;
        return (rt, f) => {
          const v = code(rt, f);
          return v === SHORT ? null : v;
        };
      }
      default:
        return this.simple(e);
    }
  }

  private simple(e: Expr): Code {
    switch (e.k) {
      case 'lit': {
        const v = literalValue(e.value);
        return () => v;
      }
      case 'interp':
        return this.interpolation(e);
      case 'name':
        return this.name(e);
      case 'unary':
        return this.unary(e);
      case 'update':
        return this.update(e);
      case 'binary':
        return this.binary(e);
      case 'assign':
        return this.assign(e);
      case 'cond': {
        const test = this.expr(e.test);
        const then = this.expr(e.then);
        const other = this.expr(e.else);
        return at(e.test.pos, (rt, f) => (toBoolean(test(rt, f)) ? then(rt, f) : other(rt, f)));
      }
      case 'cast': {
        const type = this.resolveType(e.type);
        const operand = this.expr(e.operand);
        return at(e.pos, (rt, f) => castValue(rt, type, operand(rt, f)));
      }
      case 'is':
        return this.isExpr(e);
      case 'as': {
        const type = this.resolveType(e.type);
        const operand = this.expr(e.operand);
        return (rt, f) => {
          const v = operand(rt, f);
          return isInstance(type, v) ? v : null;
        };
      }
      case 'lambda':
        return this.lambda(e.params, e.body, e.pos, null);
      case 'new':
        return this.newObject(e);
      case 'newArray':
        return this.newArray(e);
      case 'newAnon': {
        const names = e.props.map((p) => p.name);
        for (const n of names) this.anonNames.add(n);
        const values = e.props.map((p) => this.expr(p.value));
        return (rt, f) =>
          new CsAnon(
            names,
            values.map((v) => v(rt, f)),
          );
      }
      case 'default': {
        if (!e.type) return () => null;
        const t = this.resolveType(e.type);
        return () => defaultOf(t);
      }
      case 'throwExpr': {
        const value = this.expr(e.value);
        return at(e.pos, (rt, f) => {
          throw toThrowable(value(rt, f));
        });
      }
      case 'typeExpr':
        throw new CompileError(`'${e.type.name}' is a type, not a value`, e.pos);
      case 'typeof':
        throw new CompileError('typeof is not supported in policy expressions', e.pos);
      case 'nameof':
        return () => e.name;
      default:
        throw new CompileError('unsupported expression', (e as Expr).pos);
    }
  }

  private interpolation(e: Extract<Expr, { k: 'interp' }>): Code {
    const parts = e.parts;
    const holes = e.holes.map((h) => {
      const value = this.expr(h.expr);
      const format = h.format;
      const align = h.alignment && h.alignment.k === 'lit' ? (h.alignment.value as number) : 0;
      return { value, format, align, pos: h.expr.pos };
    });
    return (rt, f) => {
      let s = parts[0]!;
      for (let i = 0; i < holes.length; i++) {
        const h = holes[i]!;
        const v = h.value(rt, f);
        let text: string;
        if (h.format !== undefined && v !== null && v !== undefined) {
          text = formatWith(rt, v, h.format, h.pos);
        } else {
          text = toDotNetStringRt(rt, v);
        }
        const next = parts[i + 1]!;
        checkStringLength(rt, s.length + Math.max(text.length, Math.abs(h.align)) + next.length);
        if (h.align > 0) text = text.padStart(h.align);
        else if (h.align < 0) text = text.padEnd(-h.align);
        s += text + next;
      }
      return s;
    };
  }

  private name(e: Extract<Expr, { k: 'name' }>): Code {
    const r = this.lookup(e.name);
    if (r) return this.readLocal(r);
    if (e.name === 'context') {
      // Bare `context` that is not the target of a member access escapes analysis: report everything.
      this.references.add('*');
      return (rt) => rt.ctx;
    }
    const t = this.typeOrNamespace(e);
    if (t)
      throw new CompileError(
        `'${e.name}' is a ${t.kind === 'type' ? 'type' : 'namespace'}, not a value`,
        e.pos,
      );
    throw new CompileError(`the name '${e.name}' does not exist in the current context`, e.pos);
  }

  private member(e: Extract<Expr, { k: 'member' }>): Code {
    const name = e.name;
    // context.X / context.X.Y: record what the expression reads.
    if (e.target.k === 'name' && e.target.name === 'context' && !this.lookup('context')) {
      this.references.add(name);
      this.bareCount.set(name, (this.bareCount.get(name) ?? 0) + 1);
      const p = findProperty(TYPES_BY_NAME.get('IContext')!, name);
      if (!p)
        throw new CompileError(
          `'${name}' is not a member of context${didYouMean(name, TYPES_BY_NAME.get('IContext')!.props.keys())}`,
          e.pos,
        );
      return (rt) => p.get(rt, rt.ctx);
    }
    if (
      e.target.k === 'member' &&
      e.target.target.k === 'name' &&
      e.target.target.name === 'context' &&
      !this.lookup('context')
    ) {
      this.references.add(`${e.target.name}.${name}`);
      this.followedCount.set(e.target.name, (this.followedCount.get(e.target.name) ?? 0) + 1);
    }
    const owner = this.typeOrNamespace(e.target);
    if (owner?.kind === 'ns') {
      throw new CompileError(`the type or namespace '${name}' does not exist in '${owner.name}'`, e.pos);
    }
    if (owner?.kind === 'type') {
      const info = owner.type.info;
      const sp = info.staticProps.get(name);
      if (!sp) {
        if (info.staticMethods.has(name)) {
          throw new CompileError(`method group '${info.name}.${name}' cannot be used as a value`, e.pos);
        }
        throw new CompileError(
          `'${name}' is not a static member of '${info.name}' available to policy expressions`,
          e.pos,
        );
      }
      return at(e.pos, (rt) => sp.get(rt, null));
    }
    const target = this.exprInChain(e.target, true);
    this.checkMemberName(name, e.pos);
    const nullCond = e.nullCond;
    let cacheType: TypeInfo | null = null;
    let cacheProp: ReturnType<typeof findProperty>;
    return at(e.pos, (rt, f) => {
      const t = target(rt, f);
      if (t === SHORT) return SHORT;
      if (t === null || t === undefined) {
        if (nullCond) return SHORT;
        throw nullRef(`the target of '.${name}'`);
      }
      const type = typeOf(t);
      if (type !== cacheType) {
        cacheProp = findProperty(type, name);
        cacheType = type;
        if (!cacheProp) {
          cacheType = null;
          if (type === ANON_TYPE()) return (t as CsAnon).get(name);
          throw new CsException(
            'MissingMemberException',
            `'${type.fullName}' does not contain a property '${name}'`,
          );
        }
      }
      return cacheProp!.get(rt, t);
    });
  }

  // `context.X` occurrences, and those directly followed by `.Y`: a difference means `context.X` escaped whole
  // (e.g. `var r = context.Request;`), so every member of X may be read: reported as 'X.*'.
  private readonly bareCount = new Map<string, number>();
  private readonly followedCount = new Map<string, number>();

  finishReferences(): ReadonlySet<string> {
    for (const [name, n] of this.bareCount) {
      if ((name === 'Request' || name === 'Response') && n > (this.followedCount.get(name) ?? 0)) {
        this.references.add(`${name}.*`);
      }
    }
    return this.references;
  }

  private args(args: Arg[]): { codes: Code[]; hasOut: boolean } {
    let hasOut = false;
    const codes = args.map((a) => {
      if (a.modifier) {
        hasOut = true;
        return this.outArg(a);
      }
      return this.expr(a.expr);
    });
    return { codes, hasOut };
  }

  private outArg(a: Arg): Code {
    if (a.declare) {
      const type = a.declare.type ? this.resolveType(a.declare.type) : null;
      const local = this.fn.declare(a.declare.name, type, a.expr.pos);
      const w = this.writeLocal({ depth: 0, local });
      const r = this.readLocal({ depth: 0, local });
      return (rt, f) =>
        new OutRef(
          () => r(rt, f),
          (v) => w(f, v),
        );
    }
    const lv = this.lvalue(a.expr);
    return (rt, f) => {
      const ref = lv(rt, f);
      return new OutRef(ref.get, ref.set);
    };
  }

  private call(e: Extract<Expr, { k: 'call' }>): Code {
    const callee = e.callee;
    // Local function or delegate variable: Name(args)
    if (callee.k === 'name') {
      const r = this.lookup(callee.name);
      if (!r) {
        if (callee.name === 'nameof' && e.args.length === 1) {
          const a = e.args[0]!.expr;
          const n = a.k === 'name' || a.k === 'member' ? a.name : '';
          return () => n;
        }
        throw new CompileError(`the name '${callee.name}' does not exist in the current context`, callee.pos);
      }
      const fnCode = this.readLocal(r);
      const { codes } = this.args(e.args);
      return at(e.pos, (rt, f) => {
        const fn = fnCode(rt, f);
        if (typeof fn !== 'function') throw nullRef(`'${callee.name}'`);
        return fn(...codes.map((c) => c(rt, f)));
      });
    }
    if (callee.k !== 'member') {
      const fnCode = this.expr(callee);
      const { codes } = this.args(e.args);
      return at(e.pos, (rt, f) => {
        const fn = fnCode(rt, f);
        if (typeof fn !== 'function')
          throw new CsException('InvalidOperationException', 'the value is not a delegate');
        return fn(...codes.map((c) => c(rt, f)));
      });
    }
    const name = callee.name;
    const typeArgs = (callee.typeArgs ?? []).map((t) => this.resolveType(t));
    const { codes } = this.args(e.args);
    const n = codes.length;
    // context.Trace("…")
    if (callee.target.k === 'name' && callee.target.name === 'context' && !this.lookup('context')) {
      const m = TYPES_BY_NAME.get('IContext')!.methods.get(name);
      if (!m) throw new CompileError(`'${name}' is not a method of context`, callee.pos);
      return at(callee.pos, (rt, f) => m(rt, rt.ctx, evalArgs(codes, rt, f), typeArgs));
    }
    const owner = this.typeOrNamespace(callee.target);
    if (owner?.kind === 'ns') {
      throw new CompileError(`the type or namespace '${name}' does not exist in '${owner.name}'`, callee.pos);
    }
    if (owner?.kind === 'type') {
      const info = owner.type.info;
      const m = info.staticMethods.get(name);
      if (!m) {
        throw new CompileError(
          `'${name}' is not a static method of '${info.name}' available to policy expressions${didYouMean(name, info.staticMethods.keys())}`,
          callee.pos,
        );
      }
      this.checkConstantArgs(info.constantArgChecks.get(name), `${info.name}.${name}`, e.args, callee.pos);
      return at(callee.pos, (rt, f) => m(rt, null, evalArgs(codes, rt, f), typeArgs));
    }
    const target = this.exprInChain(callee.target, true);
    this.checkMemberName(name, callee.pos);
    const nullCond = callee.nullCond;
    let cacheType: TypeInfo | null = null;
    let cacheMethod: Method | undefined;
    const resolve = (t: unknown): Method => {
      const type = typeOf(t);
      if (type !== cacheType) {
        cacheMethod = findMethod(type, name);
        if (!cacheMethod) {
          throw new CsException(
            'MissingMethodException',
            `'${type.fullName}' does not contain a method '${name}'`,
          );
        }
        cacheType = type;
      }
      return cacheMethod!;
    };
    // Specialised arities avoid building an arguments array through map for the common cases.
    if (n === 0) {
      return at(callee.pos, (rt, f) => {
        const t = target(rt, f);
        if (t === SHORT) return SHORT;
        if (t === null || t === undefined) {
          if (nullCond) return SHORT;
          throw nullRef(`the target of '.${name}()'`);
        }
        return resolve(t)(rt, t, [], typeArgs);
      });
    }
    if (n === 1) {
      const a0 = codes[0]!;
      return at(callee.pos, (rt, f) => {
        const t = target(rt, f);
        if (t === SHORT) return SHORT;
        if (t === null || t === undefined) {
          if (nullCond) return SHORT;
          throw nullRef(`the target of '.${name}()'`);
        }
        return resolve(t)(rt, t, [a0(rt, f)], typeArgs);
      });
    }
    if (n === 2) {
      const a0 = codes[0]!;
      const a1 = codes[1]!;
      return at(callee.pos, (rt, f) => {
        const t = target(rt, f);
        if (t === SHORT) return SHORT;
        if (t === null || t === undefined) {
          if (nullCond) return SHORT;
          throw nullRef(`the target of '.${name}()'`);
        }
        return resolve(t)(rt, t, [a0(rt, f), a1(rt, f)], typeArgs);
      });
    }
    return at(callee.pos, (rt, f) => {
      const t = target(rt, f);
      if (t === SHORT) return SHORT;
      if (t === null || t === undefined) {
        if (nullCond) return SHORT;
        throw nullRef(`the target of '.${name}()'`);
      }
      return resolve(t)(rt, t, evalArgs(codes, rt, f), typeArgs);
    });
  }

  private index(e: Extract<Expr, { k: 'index' }>): Code {
    const target = this.exprInChain(e.target, true);
    const args = e.args.map((a) => this.expr(a));
    const nullCond = e.nullCond;
    return at(e.pos, (rt, f) => {
      const t = target(rt, f);
      if (t === SHORT) return SHORT;
      if (t === null || t === undefined) {
        if (nullCond) return SHORT;
        throw nullRef('the target of an indexer');
      }
      const idx = findIndexer(typeOf(t));
      if (!idx)
        throw new CsException(
          'InvalidOperationException',
          `cannot apply indexing to a value of type '${typeName(t)}'`,
        );
      return idx.get(rt, t, evalArgs(args, rt, f));
    });
  }

  private unary(e: Extract<Expr, { k: 'unary' }>): Code {
    // -2147483648 and -9223372036854775808 are only representable as negated literals.
    if (e.op === '-' && e.operand.k === 'lit') {
      const v = e.operand.value as { intMinMagnitude?: boolean; long?: bigint };
      if (v && typeof v === 'object' && v.intMinMagnitude) return () => -2147483648;
      if (v && typeof v === 'object' && v.long === -9223372036854775808n) return () => -9223372036854775808n;
    }
    const operand = this.expr(e.operand);
    switch (e.op) {
      case '!':
        return at(e.pos, (rt, f) => {
          const v = operand(rt, f);
          return v === null ? null : !toBoolean(v);
        });
      case '-':
        return at(e.pos, (rt, f) => negate(operand(rt, f)));
      case '+':
        return operand;
      default:
        return at(e.pos, (rt, f) => {
          const v = operand(rt, f);
          if (typeof v === 'number') return ~v;
          if (typeof v === 'bigint') return BigInt.asIntN(64, ~v);
          throw new CsException(
            'InvalidOperationException',
            `Operator '~' cannot be applied to '${typeName(v)}'`,
          );
        });
    }
  }

  /** Compiles an assignable expression to a function that yields a get/set pair for it. */
  private lvalue(e: Expr): (rt: EvalRt, f: Frame) => { get: () => unknown; set: (v: unknown) => void } {
    if (e.k === 'name') {
      const r = this.lookup(e.name);
      if (!r) throw new CompileError(`the name '${e.name}' does not exist in the current context`, e.pos);
      if (r.local.isFunction) throw new CompileError(`cannot assign to local function '${e.name}'`, e.pos);
      const read = this.readLocal(r);
      const write = this.writeLocal(r);
      return (rt, f) => ({ get: () => read(rt, f), set: (v) => write(f, v) });
    }
    if (e.k === 'member') {
      this.checkMemberName(e.name, e.pos);
      if (this.typeOrNamespace(e.target))
        throw new CompileError(`static member '${e.name}' cannot be assigned`, e.pos);
      const target = this.expr(e.target);
      const name = e.name;
      return (rt, f) => {
        const t = target(rt, f);
        if (t === null || t === undefined) throw nullRef(`the target of '.${name}'`);
        const p = findProperty(typeOf(t), name);
        if (!p)
          throw new CsException(
            'MissingMemberException',
            `'${typeName(t)}' does not contain a property '${name}'`,
          );
        return {
          get: () => p.get(rt, t),
          set: (v) => {
            if (!p.set)
              throw new CsException(
                'InvalidOperationException',
                `property '${name}' of '${typeName(t)}' is read-only`,
              );
            p.set(rt, t, v);
          },
        };
      };
    }
    if (e.k === 'index') {
      const target = this.expr(e.target);
      const args = e.args.map((a) => this.expr(a));
      return (rt, f) => {
        const t = target(rt, f);
        if (t === null || t === undefined) throw nullRef('the target of an indexer');
        const idx = findIndexer(typeOf(t));
        if (!idx)
          throw new CsException('InvalidOperationException', `cannot apply indexing to '${typeName(t)}'`);
        const a = evalArgs(args, rt, f);
        return {
          get: () => idx.get(rt, t, a),
          set: (v) => {
            if (!idx.set)
              throw new CsException(
                'InvalidOperationException',
                `the indexer of '${typeName(t)}' is read-only`,
              );
            idx.set(rt, t, a, v);
          },
        };
      };
    }
    throw new CompileError(
      'the left-hand side of an assignment must be a variable, property or indexer',
      e.pos,
    );
  }

  private update(e: Extract<Expr, { k: 'update' }>): Code {
    const lv = this.lvalue(e.target);
    const delta = e.op === '++' ? 1 : -1;
    const prefix = e.prefix;
    return at(e.pos, (rt, f) => {
      const ref = lv(rt, f);
      const old = ref.get();
      const next = old instanceof CsChar ? new CsChar(old.code + delta) : add(rt, old, delta);
      ref.set(next);
      return prefix ? next : old;
    });
  }

  private assign(e: Extract<Expr, { k: 'assign' }>): Code {
    const value = this.expr(e.value);
    // Fast path: plain assignment to a local.
    if (e.op === '=' && e.target.k === 'name') {
      const r = this.lookup(e.target.name);
      if (r && !r.local.isFunction) {
        const write = this.writeLocal(r);
        const read = this.readLocal(r);
        return at(e.pos, (rt, f) => {
          write(f, value(rt, f));
          return read(rt, f);
        });
      }
    }
    const lv = this.lvalue(e.target);
    if (e.op === '=') {
      return at(e.pos, (rt, f) => {
        const ref = lv(rt, f);
        const v = value(rt, f);
        ref.set(v);
        return v;
      });
    }
    const op = e.op.slice(0, -1);
    if (op === '??') {
      return at(e.pos, (rt, f) => {
        const ref = lv(rt, f);
        const cur = ref.get();
        if (cur !== null && cur !== undefined) return cur;
        const v = value(rt, f);
        ref.set(v);
        return v;
      });
    }
    const apply = binaryOperator(op);
    return at(e.pos, (rt, f) => {
      const ref = lv(rt, f);
      const v = apply(rt, ref.get(), value(rt, f));
      ref.set(v);
      return v;
    });
  }

  private binary(e: Extract<Expr, { k: 'binary' }>): Code {
    const left = this.expr(e.left);
    const right = this.expr(e.right);
    switch (e.op) {
      case '&&':
        return at(e.pos, (rt, f) => toBoolean(left(rt, f)) && toBoolean(right(rt, f)));
      case '||':
        return at(e.pos, (rt, f) => toBoolean(left(rt, f)) || toBoolean(right(rt, f)));
      case '??':
        return (rt, f) => {
          const l = left(rt, f);
          return l === null || l === undefined ? right(rt, f) : l;
        };
      case '==':
        return at(e.pos, (rt, f) => {
          const l = left(rt, f);
          const r = right(rt, f);
          return l === r || equals(l, r);
        });
      case '!=':
        return at(e.pos, (rt, f) => {
          const l = left(rt, f);
          const r = right(rt, f);
          return !(l === r || equals(l, r));
        });
      default: {
        const op = binaryOperator(e.op);
        return at(e.pos, (rt, f) => op(rt, left(rt, f), right(rt, f)));
      }
    }
  }

  private isExpr(e: Extract<Expr, { k: 'is' }>): Code {
    const operand = this.expr(e.operand);
    const negated = e.negated;
    if (e.pattern) {
      const pattern = this.expr(e.pattern);
      return (rt, f) => equals(operand(rt, f), pattern(rt, f)) !== negated;
    }
    const type = this.resolveType(e.type!);
    if (e.binding) {
      const local = this.fn.declare(e.binding, type, e.pos);
      const write = this.writeLocal({ depth: 0, local });
      return (rt, f) => {
        const v = operand(rt, f);
        if (!isInstance(type, v)) return false;
        write(f, v);
        return true;
      };
    }
    return (rt, f) => isInstance(type, operand(rt, f)) !== negated;
  }

  private lambda(
    params: { name: string; type?: TypeRef }[],
    body: Expr | Stmt,
    pos: number,
    returnType: CsType | null,
  ): Code {
    const outer = this.fn;
    const fn = new FnScope(outer);
    this.fn = fn;
    try {
      const locals = params.map((p) => fn.declare(p.name, p.type ? this.resolveType(p.type) : null, pos));
      const convs = locals.map((l) => (l.type ? convertImplicit(l.type) : null));
      let run: (rt: EvalRt, f: Frame) => unknown;
      if ('k' in body && isStmt(body)) {
        const stmt = this.stmt(body);
        const conv = returnType ? convertImplicit(returnType) : null;
        run = (rt, f) => {
          const s = stmt(rt, f);
          if (s === RETURN) {
            const v = rt.ret;
            rt.ret = undefined;
            return conv ? conv(v) : v;
          }
          return undefined;
        };
      } else {
        run = this.expr(body as Expr);
      }
      const size = () => fn.slots;
      return (rt, f) => {
        const slots = size();
        return (...args: unknown[]) => {
          step(rt);
          if (++rt.depth > MAX_CALL_DEPTH) {
            rt.depth = 0;
            throw new LimitError(`calls nested deeper than ${MAX_CALL_DEPTH} (unbounded recursion?)`);
          }
          const frame: Frame = new Array(slots);
          frame[0] = f;
          for (let i = 0; i < locals.length; i++) {
            const v = args[i] ?? null;
            frame[locals[i]!.slot] = convs[i] ? convs[i]!(v) : v;
          }
          try {
            return run(rt, frame);
          } finally {
            rt.depth--;
          }
        };
      };
    } finally {
      this.fn = outer;
    }
  }

  /** Runs a library's compile-time argument check (e.g. a literal regex pattern) and refuses at the argument. */
  private checkConstantArgs(
    check: ConstantArgsCheck | undefined,
    what: string,
    args: Arg[],
    pos: number,
  ): void {
    if (!check) return;
    try {
      check(args.map((a) => (a.modifier ? UNKNOWN_ARG : this.constantOf(a.expr))));
    } catch (err) {
      if (!(err instanceof ArgumentRefusal)) throw err;
      throw new CompileError(`${what}: ${err.message}`, args[err.argIndex]?.expr.pos ?? pos);
    }
  }

  /** The value of a constant expression (literal, enum member, enum members combined with `|`), or UNKNOWN_ARG. */
  private constantOf(e: Expr): unknown {
    if (e.k === 'lit') return literalValue(e.value);
    if (e.k === 'member' && !e.nullCond) {
      const owner = this.typeOrNamespace(e.target);
      const p = owner?.kind === 'type' ? owner.type.info.staticProps.get(e.name) : undefined;
      return p && 'constant' in p ? p.constant : UNKNOWN_ARG;
    }
    if (e.k === 'binary' && e.op === '|') {
      const a = this.constantOf(e.left);
      const b = this.constantOf(e.right);
      if (a instanceof CsEnum && b instanceof CsEnum && a.enumName === b.enumName) {
        return new CsEnum(a.enumName, a.value | b.value, a.names);
      }
    }
    return UNKNOWN_ARG;
  }

  private newObject(e: Extract<Expr, { k: 'new' }>): Code {
    const type = this.resolveType(e.type);
    const info = type.info;
    if (!info.construct)
      throw new CompileError(`'${info.name}' cannot be created in policy expressions`, e.pos);
    const construct = info.construct;
    const { codes } = this.args(e.args);
    this.checkConstantArgs(info.constantArgChecks.get('new'), `new ${info.name}`, e.args, e.pos);
    let init: ((rt: EvalRt, f: Frame, obj: unknown) => void) | null = null;
    if (e.init?.k === 'object') {
      const members = e.init.members.map((m) => {
        this.checkMemberName(m.name, m.pos);
        const p = findProperty(info, m.name);
        if (!p?.set) throw new CompileError(`'${m.name}' is not a settable member of '${info.name}'`, m.pos);
        return { set: p.set, value: this.expr(m.value) };
      });
      init = (rt, f, obj) => {
        for (const m of members) m.set(rt, obj, m.value(rt, f));
      };
    } else if (e.init?.k === 'collection') {
      const items = e.init.items.map((it) =>
        Array.isArray(it)
          ? { kind: 'add' as const, args: it.map((x) => this.expr(x)) }
          : { kind: 'index' as const, args: it.key.map((x) => this.expr(x)), value: this.expr(it.value) },
      );
      const addItem = info.addItem;
      const idx = findIndexer(info);
      if (!addItem) throw new CompileError(`'${info.name}' does not support collection initializers`, e.pos);
      init = (rt, f, obj) => {
        for (const it of items) {
          if (it.kind === 'add') addItem(rt, obj, evalArgs(it.args, rt, f));
          else idx!.set!(rt, obj, evalArgs(it.args, rt, f), it.value(rt, f));
        }
      };
    }
    return at(e.pos, (rt, f) => {
      const obj = construct(rt, evalArgs(codes, rt, f), type.args);
      if (init) init(rt, f, obj);
      return obj;
    });
  }

  private newArray(e: Extract<Expr, { k: 'newArray' }>): Code {
    const elem = e.elemType ? this.resolveType(e.elemType) : null;
    const items = e.items?.map((x) => this.expr(x));
    const size = e.size ? this.expr(e.size) : null;
    return at(e.pos, (rt, f) => {
      if (items) {
        checkSize(rt, items.length);
        return makeArray(
          elem,
          items.map((c) => c(rt, f)),
        );
      }
      const n = Number(size!(rt, f));
      if (!Number.isInteger(n) || n < 0)
        throw new CsException('OverflowException', 'Arithmetic operation resulted in an overflow.');
      checkSize(rt, n);
      const d = elem ? defaultOf(elem) : null;
      return makeArray(elem, new Array(n).fill(d));
    });
  }

  // ---- statements ----
  block(stmts: Stmt[]): StmtCode {
    this.fn.push();
    try {
      // Local functions may be called before their declaration: give them slots first.
      const funcs = stmts.filter((s): s is Extract<Stmt, { k: 'func' }> => s.k === 'func');
      const funcLocals = funcs.map((s) => this.fn.declare(s.name, null, s.pos, true));
      // Compile in source order so a local function sees the locals declared before it.
      const funcCodes: Code[] = [];
      const codes: StmtCode[] = [];
      for (const s of stmts) {
        if (s.k === 'func') {
          funcCodes.push(
            this.lambda(s.params, s.body, s.pos, s.returnType ? this.resolveType(s.returnType) : null),
          );
        } else {
          codes.push(this.stmt(s));
        }
      }
      const slots = funcLocals.map((l) => l.slot);
      const n = codes.length;
      return (rt, f) => {
        for (let i = 0; i < slots.length; i++) f[slots[i]!] = funcCodes[i]!(rt, f);
        for (let i = 0; i < n; i++) {
          const s = codes[i]!(rt, f);
          if (s !== undefined) return s;
        }
        return undefined;
      };
    } finally {
      this.fn.pop();
    }
  }

  stmt(s: Stmt): StmtCode {
    switch (s.k) {
      case 'block':
        return this.block(s.body);
      case 'empty':
        return () => undefined;
      case 'expr': {
        const e = this.expr(s.expr);
        return (rt, f) => {
          step(rt);
          e(rt, f);
          return undefined;
        };
      }
      case 'decl': {
        const type = s.type ? this.resolveType(s.type) : null;
        const parts = s.vars.map((v) => {
          if (!v.init && !type)
            throw new CompileError(`implicitly-typed variable '${v.name}' must be initialized`, v.pos);
          const init = v.init ? this.expr(v.init) : null;
          const local = this.fn.declare(v.name, type, v.pos);
          const write = this.writeLocal({ depth: 0, local });
          const d = type ? defaultOf(type) : null;
          return { init, write, d };
        });
        return (rt, f) => {
          step(rt);
          for (const p of parts) p.write(f, p.init ? p.init(rt, f) : p.d);
          return undefined;
        };
      }
      case 'if': {
        const test = this.expr(s.test);
        const then = this.scoped(s.then);
        const other = s.else ? this.scoped(s.else) : null;
        return at(s.test.pos, (rt, f) => {
          step(rt);
          if (toBoolean(test(rt, f))) return then(rt, f);
          return other ? other(rt, f) : undefined;
        });
      }
      case 'while':
      case 'do': {
        const test = this.expr(s.test);
        const body = this.scoped(s.body);
        const isDo = s.k === 'do';
        return (rt, f) => {
          let first = isDo;
          while (first || toBoolean(test(rt, f))) {
            first = false;
            step(rt);
            const r = body(rt, f);
            if (r === BREAK) break;
            if (r === RETURN) return r;
          }
          return undefined;
        };
      }
      case 'for': {
        this.fn.push();
        try {
          const init = s.init.map((x) => this.stmt(x));
          const test = s.test ? this.expr(s.test) : null;
          const update = s.update.map((x) => this.expr(x));
          const body = this.scoped(s.body);
          return (rt, f) => {
            for (const i of init) i(rt, f);
            while (!test || toBoolean(test(rt, f))) {
              step(rt);
              const r = body(rt, f);
              if (r === BREAK) break;
              if (r === RETURN) return r;
              for (const u of update) u(rt, f);
            }
            return undefined;
          };
        } finally {
          this.fn.pop();
        }
      }
      case 'foreach': {
        const iter = this.expr(s.iter);
        this.fn.push();
        try {
          const type = s.type ? this.resolveType(s.type) : null;
          const local = this.fn.declare(s.name, type, s.pos);
          const write = this.writeLocal({ depth: 0, local });
          const body = this.scoped(s.body);
          return at(s.iter.pos, (rt, f) => {
            const coll = iter(rt, f);
            for (const item of enumerate(coll)) {
              step(rt);
              write(f, item);
              const r = body(rt, f);
              if (r === BREAK) break;
              if (r === RETURN) return r;
            }
            return undefined;
          });
        } finally {
          this.fn.pop();
        }
      }
      case 'return': {
        if (!s.value && this.fn.parent === null) {
          throw new CompileError('a @{ } block must return a value', s.pos);
        }
        const value = s.value ? this.expr(s.value) : null;
        return (rt, f) => {
          step(rt);
          rt.ret = value ? value(rt, f) : undefined;
          return RETURN;
        };
      }
      case 'break':
        return () => BREAK;
      case 'continue':
        return () => CONTINUE;
      case 'throw': {
        const value = s.value ? this.expr(s.value) : null;
        const rethrowSlot = this.currentCatch;
        if (!value && rethrowSlot === null)
          throw new CompileError("a 'throw' without a value is only allowed in a catch block", s.pos);
        return at(s.pos, (_rt, f) => {
          if (!value) throw f[rethrowSlot!] as Error;
          throw toThrowable(value(_rt as EvalRt, f));
        });
      }
      case 'try':
        return this.tryStmt(s);
      case 'switch':
        return this.switchStmt(s);
      case 'func':
        throw new CompileError('local functions are only allowed directly in a block', s.pos);
      default:
        throw new CompileError('unsupported statement', (s as Stmt).pos);
    }
  }

  /** An embedded statement gets its own block scope (so `if (x) var y = …;` does not leak y). */
  private scoped(s: Stmt): StmtCode {
    if (s.k === 'block') return this.stmt(s);
    this.fn.push();
    try {
      return this.stmt(s);
    } finally {
      this.fn.pop();
    }
  }

  private currentCatch: number | null = null;

  private tryStmt(s: Extract<Stmt, { k: 'try' }>): StmtCode {
    const body = this.stmt(s.body);
    const catches = s.catches.map((c) => {
      this.fn.push();
      try {
        const type = c.type ? this.resolveType(c.type) : null;
        // The caught exception lives in a hidden slot so `throw;` can rethrow it.
        const hidden = this.fn.declare(`<catch@${c.pos}>`, null, c.pos);
        const named = c.name ? this.fn.declare(c.name, null, c.pos) : null;
        const saved = this.currentCatch;
        this.currentCatch = hidden.slot;
        const when = c.when ? this.expr(c.when) : null;
        const code = this.stmt(c.body);
        this.currentCatch = saved;
        return {
          typeName: type?.info.name ?? 'Exception',
          hidden: hidden.slot,
          named: named?.slot,
          when,
          code,
        };
      } finally {
        this.fn.pop();
      }
    });
    const final = s.final ? this.stmt(s.final) : null;
    return (rt, f) => {
      try {
        return body(rt, f);
      } catch (err) {
        if (err instanceof LimitError || err instanceof ExpressionError) throw err;
        const ex = err instanceof CsException ? err : wrapJsError(err);
        for (const c of catches) {
          if (!exceptionMatches(ex, c.typeName)) continue;
          f[c.hidden] = ex;
          if (c.named !== undefined) f[c.named] = ex;
          if (c.when && !toBoolean(c.when(rt, f))) continue;
          return c.code(rt, f);
        }
        throw ex;
      } finally {
        // C# forbids leaving a finally clause with return/break, so its signal is ignored.
        if (final) final(rt, f);
      }
    };
  }

  private switchStmt(s: Extract<Stmt, { k: 'switch' }>): StmtCode {
    const subject = this.expr(s.subject);
    this.fn.push();
    try {
      const sections = s.sections.map((sec) => {
        const labels = sec.labels.map((l) => {
          if (l === null) return { k: 'default' as const };
          if (l.k === 'const') return { k: 'const' as const, value: this.expr(l.value) };
          const type = this.resolveType(l.type);
          const local = l.binding ? this.fn.declare(l.binding, type, sec.pos) : null;
          return { k: 'type' as const, type, write: local ? this.writeLocal({ depth: 0, local }) : null };
        });
        const guard = sec.guard ? this.expr(sec.guard) : null;
        const body = this.block(sec.body);
        return { labels, guard, body };
      });
      return at(s.pos, (rt, f) => {
        step(rt);
        const v = subject(rt, f);
        let chosen: StmtCode | null = null;
        let fallback: StmtCode | null = null;
        outer: for (const sec of sections) {
          for (const l of sec.labels) {
            if (l.k === 'default') {
              fallback = sec.body;
              continue;
            }
            let hit: boolean;
            if (l.k === 'const') hit = equals(v, l.value(rt, f));
            else {
              hit = isInstance(l.type, v);
              if (hit && l.write) l.write(f, v);
            }
            if (hit && (!sec.guard || toBoolean(sec.guard(rt, f)))) {
              chosen = sec.body;
              break outer;
            }
          }
        }
        const run = chosen ?? fallback;
        if (!run) return undefined;
        const r = run(rt, f);
        return r === BREAK ? undefined : r;
      });
    } finally {
      this.fn.pop();
    }
  }

  get frameSize(): number {
    return this.fn.slots;
  }
}

const STMT_KINDS = new Set([
  'block',
  'expr',
  'decl',
  'if',
  'while',
  'do',
  'for',
  'foreach',
  'return',
  'break',
  'continue',
  'throw',
  'try',
  'switch',
  'func',
  'empty',
]);

function isStmt(x: Expr | Stmt): x is Stmt {
  return STMT_KINDS.has(x.k);
}

function hasNullCond(e: Expr): boolean {
  for (let c: Expr = e; ; ) {
    if (c.k === 'member' || c.k === 'index') {
      if (c.nullCond) return true;
      c = c.target;
    } else if (c.k === 'call') {
      c = c.callee;
    } else {
      return false;
    }
  }
}

function evalArgs(codes: Code[], rt: EvalRt, f: Frame): unknown[] {
  const out = new Array(codes.length);
  for (let i = 0; i < codes.length; i++) out[i] = codes[i]!(rt, f);
  return out;
}

/** Attaches the node's source offset to a .NET exception that has none yet, so messages point at the failing node. */
function at(pos: number, code: StmtCode): StmtCode;
function at(pos: number, code: Code): Code;
function at(pos: number, code: (rt: EvalRt, f: Frame) => unknown): (rt: EvalRt, f: Frame) => unknown {
  return (rt, f) => {
    try {
      return code(rt, f);
    } catch (e) {
      if ((e instanceof CsException || e instanceof LimitError) && e.offset === undefined) e.offset = pos;
      throw e;
    }
  };
}

function toThrowable(v: unknown): Error {
  if (v instanceof CsException) return v;
  if (v === null || v === undefined) return nullRef('the thrown exception');
  throw new CsException('InvalidCastException', `cannot throw a value of type '${typeName(v)}'`);
}

function literalValue(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  const o = v as {
    double?: number;
    decimal?: string;
    long?: bigint;
    char?: string;
    intMinMagnitude?: boolean;
  };
  if (o.double !== undefined) return new CsDouble(o.double);
  if (o.decimal !== undefined) {
    const d = parseDecimalText(o.decimal, true);
    if (!d) throw new CsException('FormatException', `invalid decimal literal '${o.decimal}'`);
    return d;
  }
  if (o.long !== undefined) return o.long;
  if (o.char !== undefined) return new CsChar(o.char.charCodeAt(0));
  if (o.intMinMagnitude) return 2147483648n;
  return v;
}

function shiftOp(op: string): (rt: Rt, a: unknown, b: unknown) => unknown {
  return (_rt, a, b) => {
    if (a === null || b === null) return null;
    const n = Number(b);
    if (typeof a === 'number') return op === '<<' ? a << n : a >> n;
    if (typeof a === 'bigint') {
      const s = BigInt(n & 63);
      return op === '<<' ? BigInt.asIntN(64, a << s) : a >> s;
    }
    throw new CsException(
      'InvalidOperationException',
      `Operator '${op}' cannot be applied to '${typeName(a)}'`,
    );
  };
}

function bitOp(op: '&' | '|' | '^'): (rt: Rt, a: unknown, b: unknown) => unknown {
  return (_rt, a, b) => {
    if (typeof a === 'boolean' && typeof b === 'boolean') {
      return op === '&' ? a && b : op === '|' ? a || b : a !== b;
    }
    if (a instanceof CsEnum && b instanceof CsEnum) {
      const v = op === '&' ? a.value & b.value : op === '|' ? a.value | b.value : a.value ^ b.value;
      return new CsEnum(a.enumName, v, a.names);
    }
    if (typeof a === 'number' && typeof b === 'number')
      return op === '&' ? a & b : op === '|' ? a | b : a ^ b;
    if (
      (typeof a === 'bigint' || typeof a === 'number') &&
      (typeof b === 'bigint' || typeof b === 'number')
    ) {
      const x = BigInt(a);
      const y = BigInt(b);
      return BigInt.asIntN(64, op === '&' ? x & y : op === '|' ? x | y : x ^ y);
    }
    if (a === null || b === null) return null;
    throw new CsException(
      'InvalidOperationException',
      `Operator '${op}' cannot be applied to '${typeName(a)}' and '${typeName(b)}'`,
    );
  };
}

function relOp(test: (c: number) => boolean): (rt: Rt, a: unknown, b: unknown) => unknown {
  return (_rt, a, b) => {
    if (typeof a === 'number' && typeof b === 'number') return test(a - b);
    if (a === null || b === null || a === undefined || b === undefined) return false; // lifted comparison
    if (typeof a === 'string' || typeof b === 'string') {
      throw new CsException(
        'InvalidOperationException',
        "Operator '<' cannot be applied to operands of type 'string' (use string.Compare)",
      );
    }
    const c = compare(a, b);
    return Number.isNaN(c) ? false : test(c);
  };
}

function binaryOperator(op: string): (rt: Rt, a: unknown, b: unknown) => unknown {
  switch (op) {
    case '+':
      return add;
    case '-':
      return (_rt, a, b) => subtract(a, b);
    case '*':
      return (_rt, a, b) => multiply(a, b);
    case '/':
      return (_rt, a, b) => divide(a, b);
    case '%':
      return (_rt, a, b) => remainder(a, b);
    case '<':
      return relOp((c) => c < 0);
    case '>':
      return relOp((c) => c > 0);
    case '<=':
      return relOp((c) => c <= 0);
    case '>=':
      return relOp((c) => c >= 0);
    case '<<':
    case '>>':
      return shiftOp(op);
    case '&':
    case '|':
    case '^':
      return bitOp(op);
    case '==':
      return (_rt, a, b) => equals(a, b);
    case '!=':
      return (_rt, a, b) => !equals(a, b);
    default:
      throw new TypeError(`unknown operator ${op}`);
  }
}

function formatWith(rt: Rt, v: unknown, format: string, pos: number): string {
  const m = findMethod(typeOf(v), 'ToString');
  try {
    return String(m!(rt, v, [format], []));
  } catch (e) {
    if (e instanceof CsException && e.offset === undefined) e.offset = pos;
    throw e;
  }
}

let anonType: TypeInfo | null = null;
function ANON_TYPE(): TypeInfo {
  anonType ??= TYPES_BY_NAME.get('<anonymous>')!;
  return anonType;
}

/** Does every path through these statements end in return or throw? (C# rejects blocks that fall off the end.) */
function alwaysExits(stmts: Stmt[]): boolean {
  return stmts.some((s) => exits(s));
}

function exits(s: Stmt): boolean {
  switch (s.k) {
    case 'return':
    case 'throw':
      return true;
    case 'block':
      return alwaysExits(s.body);
    case 'if':
      return s.else !== undefined && exits(s.then) && exits(s.else);
    case 'try':
      return (
        (s.final !== undefined && exits(s.final)) || (exits(s.body) && s.catches.every((c) => exits(c.body)))
      );
    case 'switch':
      return (
        s.sections.some((sec) => sec.labels.includes(null)) &&
        s.sections.every((sec) => alwaysExits(sec.body) && !containsBreak(sec.body))
      );
    case 'while':
      return s.test.k === 'lit' && s.test.value === true && !containsBreak([s.body]);
    case 'for':
      return s.test === undefined && !containsBreak([s.body]);
    case 'do':
      return exits(s.body);
    default:
      return false;
  }
}

function containsBreak(stmts: Stmt[]): boolean {
  for (const s of stmts) {
    if (s.k === 'break') return true;
    if (s.k === 'block' && containsBreak(s.body)) return true;
    if (s.k === 'if' && (containsBreak([s.then]) || (s.else && containsBreak([s.else])))) return true;
    if (s.k === 'try' && (containsBreak([s.body]) || s.catches.some((c) => containsBreak([c.body]))))
      return true;
  }
  return false;
}

export function compile(
  text: string,
  kind: ExpressionKind,
  origin: SourceOrigin | undefined,
  limitOverrides: Partial<ExpressionLimits> | undefined,
): CompiledExpression {
  const limits = resolveLimits(limitOverrides);
  const fail = (
    code: 'ExpressionSyntaxError' | 'ExpressionLimitExceeded',
    message: string,
    offset: number,
  ): never => {
    const where = locate(text, offset, origin);
    throw new ExpressionError(code, message, where);
  };
  if (text.length > limits.maxSourceLength) {
    fail(
      'ExpressionLimitExceeded',
      `expression of ${text.length} characters exceeds the limit of ${limits.maxSourceLength}`,
      0,
    );
  }
  const compiler = new Compiler(text);
  let run: (rt: EvalRt, f: Frame) => unknown;
  try {
    if (kind === 'expression') {
      if (text.trim() === '') fail('ExpressionSyntaxError', 'empty expression', 0);
      const ast = parseExpressionText(text, { maxDepth: limits.maxAstDepth });
      run = compiler.expr(ast);
    } else {
      const stmts = parseBlockText(text, { maxDepth: limits.maxAstDepth });
      if (!alwaysExits(stmts)) {
        const last = stmts[stmts.length - 1];
        fail(
          'ExpressionSyntaxError',
          'not all code paths return a value (a @{ } block must end with return)',
          last ? last.pos : 0,
        );
      }
      const body = compiler.block(stmts);
      run = (rt, f) => {
        const s = body(rt, f);
        if (s === RETURN) return rt.ret;
        throw new CsException('InvalidOperationException', 'the block ended without returning a value');
      };
    }
  } catch (e) {
    if (e instanceof ExpressionError) throw e;
    if (e instanceof DepthError) fail('ExpressionLimitExceeded', e.message, e.offset);
    if (e instanceof ParseError || e instanceof CompileError)
      fail('ExpressionSyntaxError', e.message, e.offset);
    // The depth limit bounds the tree; this is the net for a shape it does not count yet.
    if (e instanceof RangeError && /call stack/i.test(e.message))
      fail('ExpressionLimitExceeded', 'the expression is nested too deeply to compile', 0);
    throw e;
  }
  const frameSize = compiler.frameSize;
  const references: ReadonlySet<string> = new Set(compiler.finishReferences());
  const result: CompiledExpression = {
    kind,
    text,
    references,
    evaluate(context: PolicyContext): unknown {
      const rt: EvalRt = { ctx: context, limits, steps: 0, regexMilliseconds: 0, ret: undefined, depth: 0 };
      const frame: Frame = new Array(frameSize);
      try {
        const v = run(rt, frame);
        return v === undefined ? null : v;
      } catch (e) {
        throw toExpressionError(e, text, origin);
      }
    },
  };
  return Object.freeze(result);
}

function toExpressionError(e: unknown, text: string, origin: SourceOrigin | undefined): ExpressionError {
  if (e instanceof ExpressionError) return e;
  if (e instanceof LimitError) {
    return new ExpressionError('ExpressionLimitExceeded', e.message, locate(text, e.offset ?? 0, origin));
  }
  const ex = e instanceof CsException ? e : wrapJsError(e);
  const where = locate(text, ex.offset ?? 0, origin);
  return new ExpressionError('ExpressionValueEvaluationFailure', `${ex.type}: ${ex.message}`, {
    ...where,
    exceptionType: ex.type,
  });
}
