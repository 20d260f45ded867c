/**
 * The one interface every policy element satisfies. An element file (`elements/<name>.ts`) exports one
 * ElementDefinition; `elements/index.ts` lists them. The loader validates a document against the declaration
 * and then calls `compile` once; the returned closure is all that runs per request.
 */
import type { PolicyDiagnostic } from './diagnostics.js';
import type { NodeSite, PolicyNode } from './node.js';
import type { Statement } from './runtime.js';
import type { AttributeSchema, ContentSpec, Scope, Section } from './schema.js';
import type { XsdDocument } from './shared/xml-schema.js';

/** Which message a statement changes: the section's own, or one being built by its parent. */
export type MessageTarget = 'request' | 'response' | 'pending-response' | 'pending-request';

export interface CompileContext {
  readonly section: Section;
  readonly scope: Scope;
  /** The message set-header / set-body / set-status act on at this place. */
  readonly target: MessageTarget;
  /** Reports a load-time problem at a node (the loader adds file, position and path). */
  error(node: NodeSite, code: PolicyDiagnostic['code'], message: string): void;
  /** The compiled statements of a fragment, checked for this section and scope; undefined after an error. */
  includeFragment(fragmentId: string, at: NodeSite): Statement | undefined;
  /** The gateway's certificate store ids when compiled for a configuration (CompileOptions.certificateIds). */
  readonly certificateIds?: ReadonlySet<string>;
  /** The gateway's schema registry by id when compiled for a configuration (CompileOptions.schemas). */
  readonly schemas?: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  /** The registry's XML schemas by id when compiled for a configuration (CompileOptions.xmlSchemas). */
  readonly xmlSchemas?: ReadonlyMap<string, XsdDocument>;
  /**
   * The element reads the request body though its section's message is not the request, or though it only reads it
   * sometimes (send-request mode="copy"): the engine must buffer the body for it, as for `body`.
   */
  readsRequestBody(): void;
  /**
   * The element, though it runs before the backend answers, may change that answer (RunContext.responseEdits): the
   * engine must buffer the response body for it.
   */
  readsResponseBody(): void;
  /**
   * The element presents or decrypts with a certificate of the gateway's store (tls.certificates): `id`, or, when
   * which one is only known per request (a thumbprint, an id an expression computes), any of them. The engine reads
   * at start the files of the certificates something can use, and only those.
   */
  usesCertificate(id: string | undefined): void;
}

/**
 * `A` and `C` are the element's own declaration, so `compile` reads exactly the attributes and children it declared
 * (see PolicyNode). The registry holds elements as the untyped default.
 */
export interface ElementDefinition<
  A extends AttributeSchema = AttributeSchema,
  C extends ContentSpec = ContentSpec,
> {
  readonly name: string;
  /** One line for the generated policy reference. */
  readonly summary: string;
  readonly sections: readonly Section[];
  readonly scopes: readonly Scope[];
  /** Every element also accepts `id` (LastError.PolicyId); the loader adds it. */
  readonly attributes: A;
  readonly content: C;
  /** The element reads or replaces the body of its section's message (so the engine must buffer it). */
  readonly body?: 'read' | 'write' | 'read-write';
  /** The element changes the response even when placed in inbound (so the engine must see response headers). */
  readonly touchesResponse?: boolean;
  /**
   * The element watches the backend's response body as it passes, unchanged (a RunContext response watcher): the
   * engine streams the body through (server-sent events) or buffers it (any other answer) to feed the watchers.
   */
  readonly watchesResponseBody?: boolean;
  /** At most once per section (cors, cache-lookup …). */
  readonly oncePerSection?: boolean;
  compile(node: PolicyNode<A, C>, c: CompileContext): Statement;
}

/**
 * Declares an element; `compile` sees its node typed by the declaration itself. The loader validates every node
 * against that same declaration before it calls `compile` (and does not call it after an error), which is what
 * makes the typed view sound; the registry then holds the element like any other.
 */
export function defineElement<const A extends AttributeSchema, const C extends ContentSpec>(
  definition: ElementDefinition<A, C>,
): ElementDefinition {
  return definition as unknown as ElementDefinition;
}

/** An element of the API Management reference that Portcullis declares but does not run. */
export interface DeclaredElement {
  readonly name: string;
  readonly sections: readonly Section[];
  readonly scopes: readonly Scope[];
  /** Why it is not run: the Azure service it would need, or what else is missing (in a sentence). */
  readonly unavailable: { readonly azure: string } | { readonly missing: string };
}
