/**
 * How the Envoy in front sends a request on after the engine ran. `engine`: Envoy follows the engine's routing
 * header to the backend the policies chose (Portcullis's own bootstrap, or the snippet's `engine_selected_backend`
 * route pasted into an operator's Envoy). `envoy-route`: Envoy sends each API's requests to its own route's
 * backend whatever the engine says (Envoy Gateway, Istio, an operator's Envoy without that route), so a
 * `set-backend-service` choice of another backend cannot be honoured — and must not be lost without a word.
 *
 * Under `envoy-route` the engine refuses, before it serves, a configuration whose policies name another backend
 * literally (`file:line:col`), and answers 500 (the reason in the access log) for a request whose computed choice
 * is another backend. A choice of the API's own backend, its service URL's origin, stays allowed: Envoy goes
 * there anyway, and the engine still sets the path.
 */
import type { CompiledGateway } from '../config/gateway.js';
import { type Diagnostic, DiagnosticsError } from '../diagnostic.js';
import { isExpression } from '../policy/index.js';
import { forEachPipeline } from './gateway-pipelines.js';

export type BackendRouting = 'engine' | 'envoy-route';

export const backendRoutings: readonly BackendRouting[] = ['engine', 'envoy-route'];

/** A configuration whose policies choose backends the Envoy in front will not route to. */
export class BackendNotRoutableError extends DiagnosticsError {
  override readonly name = 'BackendNotRoutableError';
}

/**
 * Every literal `set-backend-service` of a pipeline that names a backend other than its API's own: Envoy routing
 * by its own routes would send the request to the API's backend instead. Choices computed by an expression are
 * checked per request (see `routedByEnvoy`). An element shared by many pipelines is named once.
 */
export function envoyRouteProblems(gateway: CompiledGateway): Diagnostic[] {
  const problems = new Map<string, Diagnostic>();
  forEachPipeline(gateway, (pipeline, api, where) => {
    const own = new URL(api.serviceUrl).origin;
    for (const section of ['inbound', 'backend'] as const) {
      for (const use of pipeline.uses[section]) {
        if (use.element !== 'set-backend-service') continue;
        const chosen = literalChoice(use.attributes, gateway.backends);
        if (chosen === undefined || chosen.origin === own) continue;
        const key = `${use.file}:${use.line}:${use.column}`;
        if (problems.has(key)) continue;
        problems.set(key, {
          file: use.file,
          line: use.line,
          column: use.column,
          code: 'backend-not-routable',
          message:
            `<set-backend-service> chooses ${chosen.what} (${chosen.origin}), but the Envoy in front routes by its ` +
            `own routes (--backend-routing envoy-route) and sends API "${api.id}" to ${own} (${where})`,
        });
      }
    }
  });
  return [...problems.values()];
}

/** Throws BackendNotRoutableError when a policy literally chooses a backend the Envoy in front will not route to. */
export function assertEnvoyRoutesServe(gateway: CompiledGateway): void {
  const problems = envoyRouteProblems(gateway);
  if (problems.length > 0) throw new BackendNotRoutableError(problems);
}

/** Whether Envoy, routing by its own route, reaches the chosen backend: only when it is the API's own origin. */
export function routedByEnvoy(chosenOrigin: string, apiServiceUrl: string): boolean {
  return chosenOrigin === new URL(apiServiceUrl).origin;
}

function literalChoice(
  attributes: Readonly<Record<string, string>>,
  backends: ReadonlyMap<string, string>,
): { what: string; origin: string } | undefined {
  const baseUrl = attributes['base-url'];
  const backendId = attributes['backend-id'];
  if (baseUrl !== undefined && !isExpression(baseUrl) && URL.canParse(baseUrl))
    return { what: `base URL "${baseUrl}"`, origin: new URL(baseUrl).origin };
  if (backendId !== undefined && !isExpression(backendId)) {
    const url = backends.get(backendId);
    if (url !== undefined) return { what: `backend "${backendId}"`, origin: new URL(url).origin };
  }
  return undefined;
}
