/**
 * Checks a set of policy documents the way the gateway would load them: `<policies>` documents are compiled for
 * a scope, `<fragment>` documents are registered under their file name (without `.xml` / `.policy.xml`) so
 * `include-fragment` finds them, and each fragment is also checked on its own.
 */
import { basename } from 'node:path';
import { type PolicyDiagnostic, PolicyLoadError } from './diagnostics.js';
import { checkFragment, compilePolicyDocument, type PolicyDocument, readPolicyDocument } from './document.js';
import type { Scope } from './schema.js';
import type { NamedValues } from './source.js';

export interface ValidateInput {
  readonly file: string;
  readonly text: string;
}

export interface ValidateOptions {
  readonly namedValues?: NamedValues;
  readonly scope?: Scope;
  /** Fragments known besides those among the inputs (id → document text). */
  readonly fragments?: ReadonlyMap<string, ValidateInput>;
}

/** The fragment id a file defines: its name without `.policy.xml` / `.xml`. */
export function fragmentIdOf(file: string): string {
  return basename(file).replace(/(\.policy)?\.xml$/i, '');
}

export function validatePolicies(
  inputs: readonly ValidateInput[],
  options: ValidateOptions = {},
): PolicyDiagnostic[] {
  const diagnostics: PolicyDiagnostic[] = [];
  const documents: PolicyDocument[] = [];
  const fragments = new Map<string, PolicyDocument>();
  const read = (input: ValidateInput): PolicyDocument | undefined => {
    try {
      return readPolicyDocument(input.text, {
        file: input.file,
        ...(options.namedValues === undefined ? {} : { namedValues: options.namedValues }),
      });
    } catch (err) {
      if (err instanceof PolicyLoadError) {
        diagnostics.push(...err.diagnostics);
        return undefined;
      }
      throw err;
    }
  };
  for (const [id, input] of options.fragments ?? []) {
    const doc = read(input);
    if (doc !== undefined) fragments.set(id, doc);
  }
  for (const input of inputs) {
    const doc = read(input);
    if (doc === undefined) continue;
    documents.push(doc);
    if (doc.kind === 'fragment') fragments.set(fragmentIdOf(input.file), doc);
  }
  const compileOptions = {
    scope: options.scope ?? 'operation',
    fragments: (id: string) => fragments.get(id),
  };
  for (const doc of documents) {
    if (doc.kind === 'fragment') {
      diagnostics.push(...checkFragment(doc, compileOptions));
      continue;
    }
    try {
      compilePolicyDocument(doc, compileOptions);
    } catch (err) {
      if (err instanceof PolicyLoadError) diagnostics.push(...err.diagnostics);
      else throw err;
    }
  }
  return diagnostics;
}
