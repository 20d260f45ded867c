/**
 * API Management policy documents for Portcullis: read (tolerant of real-world XML), check against the element
 * registry, compile once into closures, stitch scopes into a pipeline per operation, run it per request.
 * Transport-free: nothing here knows gRPC, Koa or Envoy.
 */
export type { DiagnosticCode, PolicyDiagnostic } from './diagnostics.js';
export { formatDiagnostic, PolicyLoadError } from './diagnostics.js';
export type {
  CompiledDocument,
  CompileOptions,
  FragmentResolver,
  PolicyDocument,
  ReadOptions,
  SectionItem,
} from './document.js';
export { checkFragment, compilePolicyDocument, readPolicyDocument } from './document.js';
export type { CompileContext, DeclaredElement, ElementDefinition, MessageTarget } from './element.js';
export { DECLARED, ELEMENT_LIST, ELEMENTS } from './elements/index.js';
export type { Pipeline, PipelineNeeds, ScopeDocuments } from './pipeline.js';
export { buildPipeline, DEFAULT_GLOBAL_POLICY } from './pipeline.js';
export type { CarriedRequest } from './request-secrets.js';
export { RequestSecrets, tokenOf } from './request-secrets.js';
export type {
  BackendResponse,
  FinalResponse,
  ForwardedRequest,
  HeaderInit,
  RequestDescription,
  RequestOutcome,
} from './runner.js';
export { PipelineRun } from './runner.js';
export type {
  BackendSelection,
  Flow,
  ForwardSettings,
  RetrySettings,
  Statement,
  StatementSite,
} from './runtime.js';
export { PolicyError, RunContext, StatementFailure } from './runtime.js';
export type { Scope, Section } from './schema.js';
export { SCOPES, SECTIONS } from './schema.js';
export type * from './services.js';
export { serializeHeaders } from './shared/headers.js';
export { allowedMs, retryBudgetMs } from './shared/work-budget.js';
export type { NamedValue, NamedValues } from './source.js';
export { isExpression } from './values.js';
