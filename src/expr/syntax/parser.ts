/**
 * Recursive-descent parser with C#'s precedence table (ECMA-334 §12.4.2). Ambiguities are settled the way the C#
 * compiler settles them: `(T)x` is a cast when T is a predefined type or the token after `)` can start an operand;
 * `F<T>(…)` is a generic call when the `<…>` parses as type arguments followed by one of C#'s disambiguating tokens.
 */
import type { Arg, Expr, Initializer, Stmt, SwitchSection, TypeRef, VarDecl } from './ast.js';
import { LexError, type Token, tokenize } from './lexer.js';

export class ParseError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const PREDEFINED = new Set([
  'bool',
  'byte',
  'char',
  'decimal',
  'double',
  'float',
  'int',
  'long',
  'object',
  'sbyte',
  'short',
  'string',
  'uint',
  'ulong',
  'ushort',
  'void',
]);

// Tokens after `>` that make `<…>` type arguments (ECMA-334 §6.2.5, simplified).
const AFTER_TYPE_ARGS = new Set([
  '(',
  ')',
  ']',
  '}',
  ':',
  ';',
  ',',
  '.',
  '?',
  '==',
  '!=',
  '|',
  '^',
  '&&',
  '||',
  '&',
  '[',
]);

const BINARY_PRECEDENCE: Record<string, number> = {
  '??': 1,
  '||': 2,
  '&&': 3,
  '|': 4,
  '^': 5,
  '&': 6,
  '==': 7,
  '!=': 7,
  '<': 8,
  '>': 8,
  '<=': 8,
  '>=': 8,
  is: 8,
  as: 8,
  '<<': 9,
  '>>': 9,
  '+': 10,
  '-': 10,
  '*': 11,
  '/': 11,
  '%': 11,
};

const ASSIGN_OPS = new Set(['=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<=', '>>=', '??=']);

export interface ParseLimits {
  maxDepth: number;
}

export class DepthError extends Error {
  constructor(
    readonly offset: number,
    readonly max: number,
  ) {
    super(`expression nesting exceeds the limit of ${max}`);
  }
}

export function parseExpressionText(src: string, limits: ParseLimits): Expr {
  const p = new Parser(src, tokenizeOrThrow(src), limits);
  const e = p.expression();
  p.expectEof();
  return e;
}

export function parseBlockText(src: string, limits: ParseLimits): Stmt[] {
  const p = new Parser(src, tokenizeOrThrow(src), limits);
  const body: Stmt[] = [];
  while (!p.atEof()) body.push(p.statement());
  return body;
}

function tokenizeOrThrow(src: string, from?: number, to?: number): Token[] {
  try {
    return tokenize(src, from, to);
  } catch (e) {
    if (e instanceof LexError) throw new ParseError(e.message, e.offset);
    throw e;
  }
}

class Parser {
  private i = 0;
  private depth = 0;

  constructor(
    private readonly src: string,
    private readonly toks: Token[],
    private readonly limits: ParseLimits,
  ) {}

  // ---- token helpers ----
  private get tok(): Token {
    return this.toks[this.i]!;
  }
  private peek(n = 1): Token {
    return this.toks[Math.min(this.i + n, this.toks.length - 1)]!;
  }
  atEof(): boolean {
    return this.tok.kind === 'eof';
  }
  private is(value: string): boolean {
    const t = this.tok;
    return (t.kind === 'punct' || t.kind === 'keyword') && t.value === value;
  }
  private isIdent(value?: string): boolean {
    return this.tok.kind === 'ident' && (value === undefined || this.tok.value === value);
  }
  private eat(value: string): boolean {
    if (this.is(value)) {
      this.i++;
      return true;
    }
    return false;
  }
  private describe(t: Token): string {
    if (t.kind === 'eof') return 'end of expression';
    return `'${this.src.slice(t.start, Math.min(t.end, t.start + 40))}'`;
  }
  private fail(message: string, t: Token = this.tok): never {
    throw new ParseError(message, t.start);
  }
  private expect(value: string): Token {
    if (!this.is(value)) this.fail(`expected '${value}' but found ${this.describe(this.tok)}`);
    return this.toks[this.i++]!;
  }
  private ident(): string {
    if (this.tok.kind !== 'ident') this.fail(`expected a name but found ${this.describe(this.tok)}`);
    return this.toks[this.i++]!.value;
  }
  expectEof(): void {
    if (!this.atEof()) this.fail(`unexpected ${this.describe(this.tok)} after the end of the expression`);
  }
  private enter(): void {
    if (++this.depth > this.limits.maxDepth) throw new DepthError(this.tok.start, this.limits.maxDepth);
  }
  private leave(): void {
    this.depth--;
  }

  // ---- types ----
  /** Parses a type at the cursor, or returns null (cursor unchanged) when the tokens are not a type. */
  private tryType(): TypeRef | null {
    const save = this.i;
    const t = this.typeOrNull();
    if (t === null) this.i = save;
    return t;
  }

  private typeOrNull(): TypeRef | null {
    const start = this.tok;
    let name: string;
    if (start.kind === 'keyword' && PREDEFINED.has(start.value)) {
      name = start.value;
      this.i++;
    } else if (start.kind === 'ident') {
      name = start.value;
      this.i++;
      while (this.is('.') && this.peek().kind === 'ident') {
        this.i++;
        name += `.${this.toks[this.i++]!.value}`;
      }
    } else {
      return null;
    }
    const args: TypeRef[] = [];
    if (this.is('<')) {
      this.i++;
      for (;;) {
        const a = this.typeOrNull();
        if (a === null) return null;
        args.push(a);
        if (this.eat(',')) continue;
        break;
      }
      if (!this.eat('>')) return null;
    }
    let nullable = false;
    // `T?` is a nullable type only when what follows cannot continue a conditional expression.
    if (this.is('?') && this.nullableMarkerFollows()) {
      this.i++;
      nullable = true;
    }
    let arrayRank = 0;
    while (this.is('[') && this.peek().kind === 'punct' && this.peek().value === ']') {
      this.i += 2;
      arrayRank++;
    }
    return { name, args, arrayRank, nullable, pos: start.start };
  }

  private nullableMarkerFollows(): boolean {
    const n = this.peek();
    return (
      (n.kind === 'ident' &&
        this.peek(2).kind === 'punct' &&
        ['=', ';', ',', ')'].includes(this.peek(2).value)) ||
      (n.kind === 'punct' && (n.value === '>' || n.value === ',' || n.value === ')' || n.value === '['))
    );
  }

  private type(): TypeRef {
    const t = this.tryType();
    if (t === null) this.fail(`expected a type but found ${this.describe(this.tok)}`);
    return t;
  }

  // ---- expressions ----
  expression(): Expr {
    this.enter();
    try {
      return this.assignment();
    } finally {
      this.leave();
    }
  }

  private assignment(): Expr {
    const lambda = this.tryLambda();
    if (lambda) return lambda;
    const left = this.conditional();
    if (this.tok.kind === 'punct' && ASSIGN_OPS.has(this.tok.value)) {
      const op = this.tok.value;
      const pos = this.tok.start;
      this.i++;
      checkAssignable(left, pos);
      const value = this.assignment();
      return { k: 'assign', pos: left.pos, op, target: left, value };
    }
    // `>>=` is lexed as '>' '>=' so generics like List<List<int>> stay simple.
    if (this.is('>') && this.peek().value === '>=' && this.peek().start === this.tok.end) {
      this.i += 2;
      checkAssignable(left, left.pos);
      return { k: 'assign', pos: left.pos, op: '>>=', target: left, value: this.assignment() };
    }
    return left;
  }

  private tryLambda(): Expr | null {
    const t = this.tok;
    if (t.kind === 'ident' && this.peek().value === '=>' && this.peek().kind === 'punct') {
      this.i += 2;
      return { k: 'lambda', pos: t.start, params: [{ name: t.value }], body: this.lambdaBody() };
    }
    if (!this.is('(')) return null;
    // Find the matching ')' and check for '=>' after it.
    let depth = 0;
    let j = this.i;
    for (; j < this.toks.length; j++) {
      const v = this.toks[j]!;
      if (v.kind !== 'punct') continue;
      if (v.value === '(') depth++;
      else if (v.value === ')' && --depth === 0) break;
    }
    const after = this.toks[j + 1];
    if (after?.kind !== 'punct' || after.value !== '=>') return null;
    this.i++;
    const params: { name: string; type?: TypeRef }[] = [];
    if (!this.is(')')) {
      for (;;) {
        if (this.tok.kind === 'ident' && (this.peek().value === ',' || this.peek().value === ')')) {
          params.push({ name: this.ident() });
        } else {
          const type = this.type();
          params.push({ name: this.ident(), type });
        }
        if (!this.eat(',')) break;
      }
    }
    this.expect(')');
    this.expect('=>');
    return { k: 'lambda', pos: t.start, params, body: this.lambdaBody() };
  }

  private lambdaBody(): Expr | Stmt {
    if (this.is('{')) return this.block();
    return this.expression();
  }

  private conditional(): Expr {
    const test = this.binary(1);
    if (this.is('?')) {
      this.i++;
      const then = this.expression();
      this.expect(':');
      const otherwise = this.expression();
      return { k: 'cond', pos: test.pos, test, then, else: otherwise };
    }
    return test;
  }

  private binaryOp(): string | null {
    const t = this.tok;
    if (t.kind === 'keyword' && (t.value === 'is' || t.value === 'as')) return t.value;
    if (t.kind !== 'punct') return null;
    // '>>' arrives as two adjacent '>' tokens.
    if (
      t.value === '>' &&
      this.peek().kind === 'punct' &&
      this.peek().value === '>' &&
      this.peek().start === t.end
    ) {
      return '>>';
    }
    return t.value in BINARY_PRECEDENCE ? t.value : null;
  }

  private binary(minPrec: number): Expr {
    this.enter();
    // Each operator of a left-associative chain (`a + b + c …`) nests the tree one level deeper, although the
    // parser loops: the compiler and the evaluator recurse on that tree, so the chain counts against the depth.
    const depthBefore = this.depth;
    try {
      let left = this.unary();
      for (;;) {
        const op = this.binaryOp();
        if (op === null) return left;
        const prec = BINARY_PRECEDENCE[op]!;
        if (prec < minPrec) return left;
        // A '>>' followed by '=' is '>>=' and belongs to assignment.
        if (op === '>>' && this.peek(2).value === '=' && this.peek(2).start === this.peek().end) return left;
        const opTok = this.tok;
        this.i += op === '>>' ? 2 : 1;
        this.enter();
        if (op === 'is') {
          left = this.isExpr(left, opTok.start);
          continue;
        }
        if (op === 'as') {
          left = { k: 'as', pos: left.pos, operand: left, type: this.type() };
          continue;
        }
        // '??' is right-associative; everything else left-associative.
        const right = op === '??' ? this.binary(prec) : this.binary(prec + 1);
        left = { k: 'binary', pos: opTok.start, op, left, right };
      }
    } finally {
      this.depth = depthBefore - 1;
    }
  }

  private isExpr(operand: Expr, pos: number): Expr {
    let negated = false;
    if (this.isIdent('not')) {
      this.i++;
      negated = true;
    }
    if (this.is('null')) {
      this.i++;
      return { k: 'is', pos, operand, type: null, pattern: { k: 'lit', pos, value: null }, negated };
    }
    if (
      this.tok.kind === 'string' ||
      this.tok.kind === 'number' ||
      this.tok.kind === 'char' ||
      this.is('true') ||
      this.is('false')
    ) {
      return { k: 'is', pos, operand, type: null, pattern: this.unary(), negated };
    }
    const type = this.type();
    let binding: string | undefined;
    if (this.tok.kind === 'ident' && !negated) binding = this.ident();
    return binding === undefined
      ? { k: 'is', pos, operand, type, negated }
      : { k: 'is', pos, operand, type, binding, negated };
  }

  private unary(): Expr {
    const t = this.tok;
    if (t.kind === 'punct') {
      if (t.value === '!' || t.value === '-' || t.value === '+' || t.value === '~') {
        this.i++;
        this.enter();
        try {
          const operand = this.unary();
          return { k: 'unary', pos: t.start, op: t.value, operand };
        } finally {
          this.leave();
        }
      }
      if (t.value === '++' || t.value === '--') {
        this.i++;
        this.enter();
        try {
          const target = this.unary();
          checkAssignable(target, t.start);
          return { k: 'update', pos: t.start, op: t.value, prefix: true, target };
        } finally {
          this.leave();
        }
      }
      if (t.value === '(') {
        const cast = this.tryCast();
        if (cast) return cast;
      }
    }
    if (t.kind === 'keyword' && t.value === 'throw') {
      this.i++;
      return { k: 'throwExpr', pos: t.start, value: this.expression() };
    }
    return this.postfix(this.primary());
  }

  private tryCast(): Expr | null {
    const open = this.tok;
    const save = this.i;
    this.i++;
    const type = this.tryType();
    if (type === null || !this.is(')')) {
      this.i = save;
      return null;
    }
    this.i++;
    const next = this.tok;
    const predefined = PREDEFINED.has(type.name) && type.args.length === 0;
    const startsOperand =
      next.kind === 'ident' ||
      next.kind === 'number' ||
      next.kind === 'string' ||
      next.kind === 'char' ||
      next.kind === 'interp' ||
      (next.kind === 'keyword' && next.value !== 'as' && next.value !== 'is') ||
      (next.kind === 'punct' && (next.value === '(' || next.value === '!' || next.value === '~'));
    const predefinedOperand =
      predefined &&
      next.kind === 'punct' &&
      (next.value === '-' || next.value === '+' || next.value === '++' || next.value === '--');
    if (!(startsOperand || predefinedOperand)) {
      this.i = save;
      return null;
    }
    this.enter();
    try {
      return { k: 'cast', pos: open.start, type, operand: this.unary() };
    } finally {
      this.leave();
    }
  }

  /** After an identifier: `<T,…>` type arguments when they parse and are followed by a disambiguating token. */
  private tryTypeArgs(): TypeRef[] | undefined {
    if (!this.is('<')) return undefined;
    const save = this.i;
    this.i++;
    const args: TypeRef[] = [];
    for (;;) {
      const a = this.tryType();
      if (a === null) {
        this.i = save;
        return undefined;
      }
      args.push(a);
      if (this.eat(',')) continue;
      break;
    }
    if (!this.is('>')) {
      this.i = save;
      return undefined;
    }
    this.i++;
    const next = this.tok;
    if (next.kind === 'eof' || (next.kind === 'punct' && AFTER_TYPE_ARGS.has(next.value))) return args;
    this.i = save;
    return undefined;
  }

  private primary(): Expr {
    const t = this.tok;
    switch (t.kind) {
      case 'number':
        this.i++;
        return { k: 'lit', pos: t.start, value: numberLiteral(t, this) };
      case 'string':
        this.i++;
        return { k: 'lit', pos: t.start, value: t.value };
      case 'char':
        this.i++;
        return { k: 'lit', pos: t.start, value: { char: t.value } };
      case 'interp':
        this.i++;
        return this.interpolation(t);
      case 'ident': {
        this.i++;
        const typeArgs = this.tryTypeArgs();
        return typeArgs
          ? { k: 'name', pos: t.start, name: t.value, typeArgs }
          : { k: 'name', pos: t.start, name: t.value };
      }
      case 'keyword':
        return this.keywordPrimary(t);
      case 'punct':
        if (t.value === '(') {
          this.i++;
          this.enter();
          try {
            const e = this.expression();
            this.expect(')');
            return e;
          } finally {
            this.leave();
          }
        }
        break;
      default:
        break;
    }
    return this.fail(`expected an expression but found ${this.describe(t)}`);
  }

  private keywordPrimary(t: Token): Expr {
    switch (t.value) {
      case 'true':
      case 'false':
        this.i++;
        return { k: 'lit', pos: t.start, value: t.value === 'true' };
      case 'null':
        this.i++;
        return { k: 'lit', pos: t.start, value: null };
      case 'new':
        return this.newExpr();
      case 'typeof': {
        this.i++;
        this.expect('(');
        const type = this.type();
        this.expect(')');
        return { k: 'typeof', pos: t.start, type };
      }
      case 'default': {
        this.i++;
        if (this.eat('(')) {
          const type = this.type();
          this.expect(')');
          return { k: 'default', pos: t.start, type };
        }
        return { k: 'default', pos: t.start, type: null };
      }
      case 'checked':
      case 'unchecked': {
        this.i++;
        this.expect('(');
        const e = this.expression();
        this.expect(')');
        return e;
      }
      default:
        if (PREDEFINED.has(t.value)) {
          // `string.IsNullOrEmpty(…)`, `int.Parse(…)`: a predefined type used as a static-member receiver.
          this.i++;
          return {
            k: 'typeExpr',
            pos: t.start,
            type: { name: t.value, args: [], arrayRank: 0, nullable: false, pos: t.start },
          };
        }
    }
    return this.fail(`'${t.value}' is not supported in policy expressions`);
  }

  private interpolation(t: Token): Expr {
    const holes = t.holes!.map((h) => {
      const toks = tokenizeOrThrow(this.src, h.start, h.end);
      const sub = new Parser(this.src, toks, this.limits);
      sub.depth = this.depth;
      if (sub.atEof()) throw new ParseError('empty interpolation hole', h.start);
      const expr = sub.expression();
      sub.expectEof();
      const hole: { expr: Expr; alignment?: Expr; format?: string } = { expr };
      if (h.alignment !== undefined) {
        const n = Number.parseInt(h.alignment, 10);
        if (Number.isNaN(n))
          throw new ParseError(`interpolation alignment must be an integer, got '${h.alignment}'`, h.end);
        hole.alignment = { k: 'lit', pos: h.end, value: n };
      }
      if (h.format !== undefined) hole.format = h.format;
      return hole;
    });
    return { k: 'interp', pos: t.start, parts: t.parts!, holes };
  }

  private newExpr(): Expr {
    const start = this.tok.start;
    this.i++; // new
    if (this.is('[')) {
      // new[] { … }
      this.i++;
      this.expect(']');
      return { k: 'newArray', pos: start, elemType: null, items: this.arrayItems() };
    }
    if (this.is('{')) {
      this.i++;
      const props: { name: string; value: Expr }[] = [];
      while (!this.is('}')) {
        const nameTok = this.tok;
        if (nameTok.kind === 'ident' && this.peek().kind === 'punct' && this.peek().value === '=') {
          this.i += 2;
          props.push({ name: nameTok.value, value: this.expression() });
        } else {
          // `new { x.Name }` takes the member's name.
          const value = this.expression();
          if (value.k === 'name' || value.k === 'member') props.push({ name: value.name, value });
          else this.fail('anonymous type member needs a name (Name = value)', nameTok);
        }
        if (!this.eat(',')) break;
      }
      this.expect('}');
      return { k: 'newAnon', pos: start, props };
    }
    const type = this.typeNoArray();
    if (this.is('[')) {
      this.i++;
      if (this.is(']')) {
        this.i++;
        let rank = 0;
        while (this.is('[') && this.peek().value === ']') {
          this.i += 2;
          rank++;
        }
        const elemType = { ...type, arrayRank: rank };
        return { k: 'newArray', pos: start, elemType, items: this.arrayItems() };
      }
      const size = this.expression();
      this.expect(']');
      const elemType = { ...type, arrayRank: 0 };
      while (this.is('[') && this.peek().value === ']') {
        this.i += 2;
        elemType.arrayRank++;
      }
      return this.is('{')
        ? { k: 'newArray', pos: start, elemType, size, items: this.arrayItems() }
        : { k: 'newArray', pos: start, elemType, size };
    }
    let args: Arg[] = [];
    if (this.is('(')) args = this.arguments();
    let init: Initializer | undefined;
    if (this.is('{')) init = this.initializer();
    else if (args.length === 0 && !this.toks[this.i - 1]!.value.endsWith(')')) {
      this.fail(`expected '(' or '{' after 'new ${type.name}' but found ${this.describe(this.tok)}`);
    }
    return init ? { k: 'new', pos: start, type, args, init } : { k: 'new', pos: start, type, args };
  }

  /** A type without trailing [] (so `new string[3]` keeps its size expression). */
  private typeNoArray(): TypeRef {
    const t = this.tok;
    let name: string;
    if (t.kind === 'keyword' && PREDEFINED.has(t.value)) {
      name = t.value;
      this.i++;
    } else {
      name = this.ident();
      while (this.is('.') && this.peek().kind === 'ident') {
        this.i++;
        name += `.${this.ident()}`;
      }
    }
    const args: TypeRef[] = [];
    if (this.eat('<')) {
      for (;;) {
        args.push(this.type());
        if (!this.eat(',')) break;
      }
      this.expect('>');
    }
    return { name, args, arrayRank: 0, nullable: false, pos: t.start };
  }

  private arrayItems(): Expr[] {
    this.expect('{');
    const items: Expr[] = [];
    while (!this.is('}')) {
      items.push(this.expression());
      if (!this.eat(',')) break;
    }
    this.expect('}');
    return items;
  }

  private initializer(): Initializer {
    this.expect('{');
    // Object initializer when the first entry is `Name =`; otherwise a collection initializer.
    if (this.tok.kind === 'ident' && this.peek().value === '=' && this.peek().kind === 'punct') {
      const members: { name: string; value: Expr; pos: number }[] = [];
      while (!this.is('}')) {
        const pos = this.tok.start;
        const name = this.ident();
        this.expect('=');
        members.push({ name, value: this.expression(), pos });
        if (!this.eat(',')) break;
      }
      this.expect('}');
      return { k: 'object', members };
    }
    const items: (Expr[] | { key: Expr[]; value: Expr })[] = [];
    while (!this.is('}')) {
      if (this.is('{')) {
        this.i++;
        const group: Expr[] = [];
        while (!this.is('}')) {
          group.push(this.expression());
          if (!this.eat(',')) break;
        }
        this.expect('}');
        items.push(group);
      } else if (this.is('[')) {
        this.i++;
        const key: Expr[] = [this.expression()];
        while (this.eat(',')) key.push(this.expression());
        this.expect(']');
        this.expect('=');
        items.push({ key, value: this.expression() });
      } else {
        items.push([this.expression()]);
      }
      if (!this.eat(',')) break;
    }
    this.expect('}');
    return { k: 'collection', items };
  }

  private arguments(): Arg[] {
    this.expect('(');
    const args: Arg[] = [];
    // C# allows no trailing comma in an argument list.
    while (args.length === 0 ? !this.is(')') : true) {
      let name: string | undefined;
      if (this.tok.kind === 'ident' && this.peek().value === ':' && this.peek().kind === 'punct') {
        name = this.ident();
        this.i++;
      }
      let arg: Arg;
      if (this.is('out') || this.is('ref')) {
        const modifier = this.tok.value as 'out' | 'ref';
        this.i++;
        const pos = this.tok.start;
        if (this.is('var') && this.peek().kind === 'ident') {
          this.i++;
          const vname = this.ident();
          arg = { expr: { k: 'name', pos, name: vname }, modifier, declare: { name: vname, type: null } };
        } else if (
          this.peek().kind === 'ident' &&
          (this.peek(2).value === ')' || this.peek(2).value === ',')
        ) {
          const type = this.type();
          const vname = this.ident();
          arg = { expr: { k: 'name', pos, name: vname }, modifier, declare: { name: vname, type } };
        } else {
          const target = this.unary();
          checkAssignable(target, pos);
          arg = { expr: target, modifier };
        }
      } else {
        arg = { expr: this.expression() };
      }
      if (name !== undefined) arg.name = name;
      args.push(arg);
      if (!this.eat(',')) break;
    }
    this.expect(')');
    return args;
  }

  /** Member accesses, calls and indexers: like a binary chain, each link nests the tree one level deeper. */
  private postfix(e: Expr): Expr {
    const depthBefore = this.depth;
    try {
      return this.postfixLinks(e);
    } finally {
      this.depth = depthBefore;
    }
  }

  private postfixLinks(e: Expr): Expr {
    for (;;) {
      const t = this.tok;
      if (t.kind !== 'punct') return e;
      this.enter();
      switch (t.value) {
        case '.':
        case '?.': {
          this.i++;
          const nameTok = this.tok;
          let name: string;
          if (nameTok.kind === 'ident') name = nameTok.value;
          else if (nameTok.kind === 'keyword' && PREDEFINED.has(nameTok.value)) name = nameTok.value;
          else
            return this.fail(`expected a member name after '${t.value}' but found ${this.describe(nameTok)}`);
          this.i++;
          const typeArgs = this.tryTypeArgs();
          e = { k: 'member', pos: nameTok.start, target: e, name, nullCond: t.value === '?.' };
          if (typeArgs) e.typeArgs = typeArgs;
          break;
        }
        case '(': {
          const args = this.arguments();
          e = { k: 'call', pos: e.pos, callee: e, args };
          break;
        }
        case '[':
        case '?[': {
          this.i++;
          const args: Expr[] = [this.expression()];
          while (this.eat(',')) args.push(this.expression());
          this.expect(']');
          e = { k: 'index', pos: t.start, target: e, args, nullCond: t.value === '?[' };
          break;
        }
        case '++':
        case '--':
          this.i++;
          checkAssignable(e, t.start);
          e = { k: 'update', pos: e.pos, op: t.value, prefix: false, target: e };
          break;
        case '!':
          // Null-forgiving `x!` (C# 8) is harmless; accept it when it cannot be a prefix '!'.
          if (this.peek().kind === 'punct' && [')', '.', ';', ',', ']'].includes(this.peek().value)) {
            this.i++;
            break;
          }
          return e;
        default:
          return e;
      }
    }
  }

  // ---- statements ----
  private block(): Stmt {
    const start = this.expect('{').start;
    this.enter();
    try {
      const body: Stmt[] = [];
      while (!this.is('}')) {
        if (this.atEof()) this.fail("expected '}' but found end of expression");
        body.push(this.statement());
      }
      this.i++;
      return { k: 'block', pos: start, body };
    } finally {
      this.leave();
    }
  }

  private embedded(): Stmt {
    return this.statement();
  }

  statement(): Stmt {
    const t = this.tok;
    if (t.kind === 'punct') {
      if (t.value === '{') return this.block();
      if (t.value === ';') {
        this.i++;
        return { k: 'empty', pos: t.start };
      }
    }
    if (t.kind === 'keyword') {
      switch (t.value) {
        case 'if': {
          this.i++;
          this.expect('(');
          const test = this.expression();
          this.expect(')');
          const then = this.embedded();
          if (this.eat('else')) return { k: 'if', pos: t.start, test, then, else: this.embedded() };
          return { k: 'if', pos: t.start, test, then };
        }
        case 'while': {
          this.i++;
          this.expect('(');
          const test = this.expression();
          this.expect(')');
          return { k: 'while', pos: t.start, test, body: this.embedded() };
        }
        case 'do': {
          this.i++;
          const body = this.embedded();
          this.expect('while');
          this.expect('(');
          const test = this.expression();
          this.expect(')');
          this.expect(';');
          return { k: 'do', pos: t.start, test, body };
        }
        case 'for':
          return this.forStatement();
        case 'foreach': {
          this.i++;
          this.expect('(');
          let type: TypeRef | null = null;
          if (!this.eat('var')) type = this.type();
          const name = this.ident();
          this.expect('in');
          const iter = this.expression();
          this.expect(')');
          return { k: 'foreach', pos: t.start, type, name, iter, body: this.embedded() };
        }
        case 'return': {
          this.i++;
          if (this.eat(';')) return { k: 'return', pos: t.start };
          const value = this.expression();
          this.expect(';');
          return { k: 'return', pos: t.start, value };
        }
        case 'break':
          this.i++;
          this.expect(';');
          return { k: 'break', pos: t.start };
        case 'continue':
          this.i++;
          this.expect(';');
          return { k: 'continue', pos: t.start };
        case 'throw': {
          this.i++;
          if (this.eat(';')) return { k: 'throw', pos: t.start };
          const value = this.expression();
          this.expect(';');
          return { k: 'throw', pos: t.start, value };
        }
        case 'try':
          return this.tryStatement();
        case 'switch':
          return this.switchStatement();
        case 'const':
          this.i++;
          return this.declarationOrExpression();
        case 'checked':
        case 'unchecked':
          // `unchecked { … }`: our int arithmetic always wraps like unchecked C#, so the block is just a block.
          if (this.peek().value === '{') {
            this.i++;
            return this.block();
          }
          break;
        case 'using': {
          // using (var x = …) { … }: nothing to dispose in the sandbox; the declaration is scoped to the body.
          this.i++;
          this.expect('(');
          const decl = this.tryDeclaration();
          const head: Stmt = decl ?? { k: 'expr', pos: this.tok.start, expr: this.expression() };
          this.expect(')');
          const body = this.embedded();
          return { k: 'block', pos: t.start, body: [head, body] };
        }
        default:
          break;
      }
    }
    return this.declarationOrExpression();
  }

  private forStatement(): Stmt {
    const start = this.tok.start;
    this.i++;
    this.expect('(');
    const init: Stmt[] = [];
    if (!this.is(';')) {
      const decl = this.tryDeclaration();
      if (decl) init.push(decl);
      else {
        for (;;) {
          const e = this.expression();
          init.push({ k: 'expr', pos: e.pos, expr: e });
          if (!this.eat(',')) break;
        }
      }
    }
    this.expect(';');
    const test = this.is(';') ? undefined : this.expression();
    this.expect(';');
    const update: Expr[] = [];
    if (!this.is(')')) {
      for (;;) {
        update.push(this.expression());
        if (!this.eat(',')) break;
      }
    }
    this.expect(')');
    const body = this.embedded();
    return test
      ? { k: 'for', pos: start, init, test, update, body }
      : { k: 'for', pos: start, init, update, body };
  }

  private tryStatement(): Stmt {
    const start = this.tok.start;
    this.i++;
    const body = this.block();
    const catches: { type: TypeRef | null; name?: string; when?: Expr; body: Stmt; pos: number }[] = [];
    while (this.is('catch')) {
      const pos = this.tok.start;
      this.i++;
      let type: TypeRef | null = null;
      let name: string | undefined;
      if (this.eat('(')) {
        type = this.type();
        if (this.tok.kind === 'ident') name = this.ident();
        this.expect(')');
      }
      let when: Expr | undefined;
      if (this.isIdent('when')) {
        this.i++;
        this.expect('(');
        when = this.expression();
        this.expect(')');
      }
      const c: { type: TypeRef | null; name?: string; when?: Expr; body: Stmt; pos: number } = {
        type,
        body: this.block(),
        pos,
      };
      if (name !== undefined) c.name = name;
      if (when !== undefined) c.when = when;
      catches.push(c);
    }
    let final: Stmt | undefined;
    if (this.eat('finally')) final = this.block();
    if (catches.length === 0 && !final) this.fail("a try statement needs a 'catch' or 'finally'");
    return final ? { k: 'try', pos: start, body, catches, final } : { k: 'try', pos: start, body, catches };
  }

  private switchStatement(): Stmt {
    const start = this.tok.start;
    this.i++;
    this.expect('(');
    const subject = this.expression();
    this.expect(')');
    this.expect('{');
    const sections: SwitchSection[] = [];
    while (!this.is('}')) {
      const pos = this.tok.start;
      const labels: SwitchSection['labels'] = [];
      let guard: Expr | undefined;
      while (this.is('case') || this.is('default')) {
        if (this.eat('default')) {
          this.expect(':');
          labels.push(null);
          continue;
        }
        this.i++;
        const save = this.i;
        const type = this.tryType();
        if (type && this.tok.kind === 'ident' && !this.isIdent('when')) {
          labels.push({ k: 'type', type, binding: this.ident() });
        } else {
          this.i = save;
          labels.push({ k: 'const', value: this.conditional() });
        }
        if (this.isIdent('when')) {
          this.i++;
          guard = this.expression();
        }
        this.expect(':');
      }
      if (labels.length === 0) this.fail(`expected 'case' or 'default' but found ${this.describe(this.tok)}`);
      const body: Stmt[] = [];
      while (!this.is('case') && !this.is('default') && !this.is('}')) body.push(this.statement());
      const section: SwitchSection = { labels, body, pos };
      if (guard) section.guard = guard;
      sections.push(section);
    }
    this.i++;
    return { k: 'switch', pos: start, subject, sections };
  }

  /** `T name = …;` / `var a = …, b = …;` / local function `T Name(T p, …) { … }`, or null. */
  private tryDeclaration(): Stmt | null {
    const start = this.tok.start;
    const save = this.i;
    let type: TypeRef | null;
    if (this.is('var') && this.peek().kind === 'ident') {
      this.i++;
      type = null;
    } else {
      const t = this.tryType();
      if (t === null || this.tok.kind !== 'ident') {
        this.i = save;
        return null;
      }
      type = t;
    }
    const after = this.peek();
    if (after.kind !== 'punct' || !['=', ';', ',', '('].includes(after.value)) {
      this.i = save;
      return null;
    }
    if (after.value === '(') {
      if (type === null) {
        this.i = save;
        return null;
      }
      return this.localFunction(start, type);
    }
    const vars: VarDecl[] = [];
    for (;;) {
      const pos = this.tok.start;
      const name = this.ident();
      if (this.eat('=')) {
        const init =
          this.is('{') && type?.arrayRank
            ? {
                k: 'newArray' as const,
                pos: this.tok.start,
                elemType: { ...type, arrayRank: type.arrayRank - 1 },
                items: this.arrayItems(),
              }
            : this.expression();
        vars.push({ name, init, pos });
      } else {
        vars.push({ name, pos });
      }
      if (!this.eat(',')) break;
    }
    return { k: 'decl', pos: start, type, vars };
  }

  private localFunction(start: number, returnType: TypeRef): Stmt {
    const name = this.ident();
    this.expect('(');
    const params: { name: string; type: TypeRef }[] = [];
    while (!this.is(')')) {
      const type = this.type();
      params.push({ name: this.ident(), type });
      if (!this.eat(',')) break;
    }
    this.expect(')');
    let body: Stmt;
    if (this.eat('=>')) {
      const value = this.expression();
      this.expect(';');
      body = { k: 'return', pos: value.pos, value };
    } else {
      body = this.block();
    }
    return {
      k: 'func',
      pos: start,
      name,
      returnType: returnType.name === 'void' ? null : returnType,
      params,
      body,
    };
  }

  private declarationOrExpression(): Stmt {
    const decl = this.tryDeclaration();
    if (decl) {
      if (decl.k !== 'func') this.expect(';');
      return decl;
    }
    const expr = this.expression();
    if (!isStatementExpression(expr)) {
      this.fail(
        'only assignment, call, increment, decrement and new expressions can be used as a statement',
        {
          ...this.tok,
          start: expr.pos,
        },
      );
    }
    this.expect(';');
    return { k: 'expr', pos: expr.pos, expr };
  }
}

function isStatementExpression(e: Expr): boolean {
  return e.k === 'assign' || e.k === 'call' || e.k === 'update' || e.k === 'new' || e.k === 'throwExpr';
}

function checkAssignable(e: Expr, pos: number): void {
  if (e.k === 'name' || e.k === 'member' || e.k === 'index') return;
  throw new ParseError('the left-hand side of an assignment must be a variable, property or indexer', pos);
}

function numberLiteral(t: Token, p: { fail(m: string, t: Token): never } | Parser): unknown {
  const text = t.value;
  const suffix = t.suffix ?? '';
  const fail = (m: string): never => {
    throw new ParseError(m, t.start);
  };
  void p;
  if (t.isReal || suffix === 'f' || suffix === 'd' || suffix === 'm') {
    // A decimal literal keeps its text: 1.50m has two fraction digits, and 0.1m is exact.
    if (suffix === 'm') return { decimal: text };
    const v = Number(text);
    if (!t.isReal && text.startsWith('0x')) fail(`invalid real literal '${text}'`);
    return { double: v };
  }
  const big = BigInt(text);
  if (suffix === '' && big <= 2147483647n) return Number(big);
  if (suffix === '' && big === 2147483648n) return { intMinMagnitude: true };
  if (suffix === 'u' && big <= 4294967295n) return { long: big };
  if (big > 18446744073709551615n) fail(`integral constant is too large: ${text}`);
  return { long: big > 9223372036854775807n ? BigInt.asIntN(64, big) : big };
}
