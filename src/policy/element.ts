/**
 * The one interface every policy element satisfies. An element file (`elements/<name>.ts`) exports one
 * ElementDefinition; `elements/index.ts` lists them. The loader validates a document against the declaration
 * and then calls `compile` once; the returned closure is all that runs per request.
 */
import type { PolicyDiagnostic } from './diagnostics.js';
import type { PolicyNode } from './node.js';
import type { Statement } from './runtime.js';
import type { AttributeSpec, ContentSpec, Scope, Section } from './schema.js';

/** Which message a statement changes: the section's own, or one being built by its parent. */
export type MessageTarget = 'request' | 'response' | 'pending-response' | 'pending-request';

export interface CompileContext {
  readonly section: Section;
  readonly scope: Scope;
  /** The message set-header / set-body / set-status act on at this place. */
  readonly target: MessageTarget;
  /** Reports a load-time problem at a node (the loader adds file, position and path). */
  error(node: PolicyNode, code: PolicyDiagnostic['code'], message: string): void;
  /** The compiled statements of a fragment, checked for this section and scope; undefined after an error. */
  includeFragment(fragmentId: string, at: PolicyNode): Statement | undefined;
}

export interface ElementDefinition {
  readonly name: string;
  /** One line for the generated policy reference. */
  readonly summary: string;
  readonly sections: readonly Section[];
  readonly scopes: readonly Scope[];
  /** Every element also accepts `id` (LastError.PolicyId); the loader adds it. */
  readonly attributes: Readonly<Record<string, AttributeSpec>>;
  readonly content: ContentSpec;
  /** The element reads or replaces the body of its section's message (so the engine must buffer it). */
  readonly body?: 'read' | 'write' | 'read-write';
  /** The element changes the response even when placed in inbound (so the engine must see response headers). */
  readonly touchesResponse?: boolean;
  /** At most once per section (cors, cache-lookup …). */
  readonly oncePerSection?: boolean;
  compile(node: PolicyNode, c: CompileContext): Statement;
}

/** An element of the API Management reference that Portcullis declares but does not run. */
export interface DeclaredElement {
  readonly name: string;
  readonly sections: readonly Section[];
  readonly scopes: readonly Scope[];
  /** `not-implemented`, or the Azure service it would need. */
  readonly unavailable: 'not-implemented' | { readonly azure: string };
}
