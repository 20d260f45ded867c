/** Syntax tree of the C# subset. Every node keeps `pos`, the offset of its first character in the source. */

export interface TypeRef {
  /** Dotted name as written, e.g. 'string', 'JObject', 'System.Text.StringBuilder', 'List'. */
  name: string;
  args: TypeRef[];
  /** Array ranks, e.g. string[] → 1, byte[][] → 2 (jagged). */
  arrayRank: number;
  nullable: boolean;
  pos: number;
}

export type Expr =
  | { k: 'lit'; pos: number; value: unknown }
  | { k: 'interp'; pos: number; parts: string[]; holes: { expr: Expr; alignment?: Expr; format?: string }[] }
  | { k: 'name'; pos: number; name: string; typeArgs?: TypeRef[] }
  | { k: 'member'; pos: number; target: Expr; name: string; nullCond: boolean; typeArgs?: TypeRef[] }
  | { k: 'call'; pos: number; callee: Expr; args: Arg[] }
  | { k: 'index'; pos: number; target: Expr; args: Expr[]; nullCond: boolean }
  | { k: 'unary'; pos: number; op: string; operand: Expr }
  | { k: 'update'; pos: number; op: '++' | '--'; prefix: boolean; target: Expr }
  | { k: 'binary'; pos: number; op: string; left: Expr; right: Expr }
  | { k: 'assign'; pos: number; op: string; target: Expr; value: Expr }
  | { k: 'cond'; pos: number; test: Expr; then: Expr; else: Expr }
  | { k: 'cast'; pos: number; type: TypeRef; operand: Expr }
  | {
      k: 'is';
      pos: number;
      operand: Expr;
      type: TypeRef | null;
      pattern?: Expr;
      binding?: string;
      negated: boolean;
    }
  | { k: 'as'; pos: number; operand: Expr; type: TypeRef }
  | { k: 'lambda'; pos: number; params: { name: string; type?: TypeRef }[]; body: Expr | Stmt }
  | { k: 'new'; pos: number; type: TypeRef; args: Arg[]; init?: Initializer }
  | { k: 'newArray'; pos: number; elemType: TypeRef | null; size?: Expr; items?: Expr[] }
  | { k: 'newAnon'; pos: number; props: { name: string; value: Expr }[] }
  | { k: 'typeof'; pos: number; type: TypeRef }
  | { k: 'default'; pos: number; type: TypeRef | null }
  | { k: 'nameof'; pos: number; name: string }
  | { k: 'throwExpr'; pos: number; value: Expr }
  | { k: 'typeExpr'; pos: number; type: TypeRef };

export type Initializer =
  | { k: 'object'; members: { name: string; value: Expr; pos: number }[] }
  | { k: 'collection'; items: (Expr[] | { key: Expr[]; value: Expr })[] };

export interface Arg {
  expr: Expr;
  name?: string;
  /** `out var x`, `out string x`, `out x`, `ref x`. */
  modifier?: 'out' | 'ref';
  declare?: { name: string; type: TypeRef | null };
}

export interface VarDecl {
  name: string;
  init?: Expr;
  pos: number;
}

export type Stmt =
  | { k: 'block'; pos: number; body: Stmt[] }
  | { k: 'expr'; pos: number; expr: Expr }
  | { k: 'decl'; pos: number; type: TypeRef | null; vars: VarDecl[] }
  | { k: 'if'; pos: number; test: Expr; then: Stmt; else?: Stmt }
  | { k: 'while'; pos: number; test: Expr; body: Stmt }
  | { k: 'do'; pos: number; test: Expr; body: Stmt }
  | { k: 'for'; pos: number; init: Stmt[]; test?: Expr; update: Expr[]; body: Stmt }
  | { k: 'foreach'; pos: number; type: TypeRef | null; name: string; iter: Expr; body: Stmt }
  | { k: 'return'; pos: number; value?: Expr }
  | { k: 'break'; pos: number }
  | { k: 'continue'; pos: number }
  | { k: 'throw'; pos: number; value?: Expr }
  | {
      k: 'try';
      pos: number;
      body: Stmt;
      catches: { type: TypeRef | null; name?: string; when?: Expr; body: Stmt; pos: number }[];
      final?: Stmt;
    }
  | { k: 'switch'; pos: number; subject: Expr; sections: SwitchSection[] }
  | {
      k: 'func';
      pos: number;
      name: string;
      returnType: TypeRef | null;
      params: { name: string; type: TypeRef }[];
      body: Stmt;
    }
  | { k: 'empty'; pos: number };

export interface SwitchSection {
  /** null label = default. */
  labels: ({ k: 'const'; value: Expr } | { k: 'type'; type: TypeRef; binding?: string } | null)[];
  guard?: Expr;
  body: Stmt[];
  pos: number;
}
