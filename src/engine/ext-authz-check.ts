import type { CompiledGateway } from '../config/gateway.js';
import { type Diagnostic, DiagnosticsError } from '../diagnostic.js';
import { headerOnlyDiagnostic, headerOnlyViolations } from '../policy/header-only.js';
import type { Pipeline } from '../policy/index.js';
import { forEachPipeline } from './gateway-pipelines.js';

/** A configuration the engine cannot serve over ext_authz: each problem names the element and where it is. */
export class NeedsExtProcError extends DiagnosticsError {
  override readonly name = 'NeedsExtProcError';
}

/**
 * Every reason the engine could not serve this configuration over ext_authz: an element of any API's, operation's
 * or product's pipeline that needs more than the request headers (see policy/header-only.ts), or an API whose
 * operation only the request body tells (SOAP by body element), or an MCP server API with a tool filter. An element shared by many pipelines (a global or
 * product policy) is named once.
 */
export function extAuthzProblems(gateway: CompiledGateway, configFile: string): Diagnostic[] {
  const problems = new Map<string, Diagnostic>();
  const check = (pipeline: Pipeline, _api: unknown, where: string) => {
    for (const violation of headerOnlyViolations(pipeline)) {
      const diagnostic = headerOnlyDiagnostic(violation);
      const key = `${diagnostic.file}:${diagnostic.line}:${diagnostic.column}:${diagnostic.message}`;
      if (!problems.has(key))
        problems.set(key, { ...diagnostic, message: `${diagnostic.message} (${where})` });
    }
  };
  for (const [index, api] of gateway.catalog.apis.entries()) {
    if (api.type === 'soap')
      problems.set(`soap:${api.id}`, {
        file: configFile,
        path: `apis[${index}]`,
        code: 'needs-ext-proc',
        message: `API "${api.id}" is a SOAP API, whose operation the request body tells: it needs ext_proc`,
      });
  }
  // The tool filter and, with auth, the write rule at an MCP API's own URL read each POST's JSON-RPC body and the
  // answer to a listing (mcp-tools.ts).
  const { auth, products } = gateway.config;
  for (const [index, api] of gateway.config.apis.entries()) {
    if (api.type !== 'mcp') continue;
    if (api.mcp?.tools)
      problems.set(`mcp:${api.id}`, {
        file: configFile,
        path: `apis[${index}].mcp.tools`,
        code: 'needs-ext-proc',
        message: `API "${api.id}" is an MCP server with a tool filter, which reads the JSON-RPC bodies: it needs ext_proc`,
      });
    else if (auth && products.some((p) => p.apis.includes(api.id)))
      problems.set(`mcp:${api.id}`, {
        file: configFile,
        path: `apis[${index}]`,
        code: 'needs-ext-proc',
        message: `API "${api.id}" is an MCP server behind the authorization server, whose write rule (mcp.writeTools) reads the JSON-RPC bodies: it needs ext_proc`,
      });
  }
  forEachPipeline(gateway, check);
  return [...problems.values()];
}

/** Throws NeedsExtProcError unless every pipeline of the configuration can run over ext_authz. */
export function assertExtAuthzServes(gateway: CompiledGateway, configFile: string): void {
  const problems = extAuthzProblems(gateway, configFile);
  if (problems.length > 0) throw new NeedsExtProcError(problems);
}
