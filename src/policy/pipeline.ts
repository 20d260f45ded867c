/**
 * The effective policy of one operation: the four scopes stitched at each `<base />`, exactly as API Management
 * does — the narrowest scope's section is the frame, and `<base />` inlines the same section of the next broader
 * scope at that position. A scope without a document inherits everything; a section without `<base />` does not.
 */
import {
  type CompiledDocument,
  compilePolicyDocument,
  type ElementUse,
  readPolicyDocument,
  type SectionItem,
  type StatementNeeds,
} from './document.js';
import { sequence } from './node.js';
import type { Statement } from './runtime.js';
import { type Scope, SECTIONS, type Section } from './schema.js';

export interface ScopeDocuments {
  readonly global?: CompiledDocument;
  readonly product?: CompiledDocument;
  readonly api?: CompiledDocument;
  readonly operation?: CompiledDocument;
}

/** Which phases the transport must deliver for this pipeline. */
export interface PipelineNeeds {
  /** Some statement reads or replaces the request body (buffer it before inbound). */
  readonly requestBody: boolean;
  /** There is outbound work: run the pipeline on the response headers. */
  readonly responseHeaders: boolean;
  /** Some statement reads or replaces the response body (buffer it before outbound). */
  readonly responseBody: boolean;
  /** Some statement watches the response body as it passes (RunContext.responseWatchers). */
  readonly responseStream: boolean;
}

export interface Pipeline {
  readonly sections: Readonly<Record<Section, Statement>>;
  /**
   * The secret named values, removed from every text of a request that leaves the pipeline (LastError.Message, log
   * lines, traces; request-secrets.ts): a policy may trace one, a failing expression quote it. Set by whoever knows
   * the named values.
   */
  readonly secrets?: readonly string[];
  /** Elements per section after stitching, in order (for diagnostics and tests). */
  readonly elements: Readonly<Record<Section, readonly string[]>>;
  /** Every element each section runs, nested ones included, with where it was written and what it needs. */
  readonly uses: Readonly<Record<Section, readonly SectionUse[]>>;
  readonly needs: PipelineNeeds;
}

/** One element of a stitched section and what its top-level statement needs from the transport. */
export interface SectionUse extends ElementUse {
  readonly statementNeeds: StatementNeeds;
}

/** Scope order, broad → narrow; `base` in one scope inlines the previous one. */
const CHAIN: readonly (keyof ScopeDocuments)[] = ['global', 'product', 'api', 'operation'];

/**
 * API Management's default global policy: forward the request in the backend section. Used when no global
 * document is configured, so an API without policies still reaches its backend.
 */
export const DEFAULT_GLOBAL_POLICY = `<policies>
  <inbound />
  <backend><forward-request /></backend>
  <outbound />
  <on-error />
</policies>`;

let defaultGlobal: CompiledDocument | undefined;
function defaultGlobalDocument(): CompiledDocument {
  defaultGlobal ??= compilePolicyDocument(
    readPolicyDocument(DEFAULT_GLOBAL_POLICY, { file: '<default global>' }),
    {
      scope: 'global',
    },
  );
  return defaultGlobal;
}

export function buildPipeline(docs: ScopeDocuments): Pipeline {
  for (const key of CHAIN) {
    const doc = docs[key];
    if (doc !== undefined && doc.scope !== (key as Scope)) {
      throw new TypeError(`the ${key} document was compiled for ${doc.scope} scope`);
    }
  }
  const chain = CHAIN.map((k, i) => docs[k] ?? (i === 0 ? defaultGlobalDocument() : undefined));
  const resolve = (level: number, section: Section): SectionItem[] => {
    if (level < 0) return [];
    const doc = chain[level];
    if (doc === undefined) return resolve(level - 1, section);
    const items = doc.sections.get(section) ?? [];
    return items.flatMap((item) => (item.kind === 'base' ? resolve(level - 1, section) : [item]));
  };
  const sections = {} as Record<Section, Statement>;
  const elements = {} as Record<Section, string[]>;
  const uses = {} as Record<Section, SectionUse[]>;
  let requestBody = false;
  let responseBody = false;
  let responseHeaders = false;
  let responseStream = false;
  for (const section of SECTIONS) {
    const items = resolve(chain.length - 1, section);
    const statements: Statement[] = [];
    elements[section] = [];
    uses[section] = [];
    for (const item of items) {
      if (item.kind !== 'statement') continue;
      statements.push(item.run);
      elements[section].push(item.element);
      for (const use of item.uses) uses[section].push({ ...use, statementNeeds: item.needs });
      requestBody ||= item.needs.requestBody;
      responseBody ||= item.needs.responseBody;
      responseHeaders ||= item.needs.responseHeaders;
      responseStream ||= item.needs.responseStream;
    }
    sections[section] = sequence(statements);
  }
  const needs: PipelineNeeds = {
    requestBody,
    responseHeaders: responseHeaders || elements.outbound.length > 0 || responseBody || responseStream,
    responseBody,
    responseStream,
  };
  return Object.freeze({
    sections: Object.freeze(sections),
    elements: Object.freeze(elements),
    uses: Object.freeze(uses),
    needs,
  });
}
