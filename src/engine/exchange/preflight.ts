import type { MatchResult } from '../../catalog/catalog.js';
import { firstHeader, type HeaderFields } from '../../extproc/headers.js';
import {
  type FinalResponse,
  type Pipeline,
  PipelineRun,
  type PolicyServices,
  type RequestDescription,
} from '../../policy/index.js';

/**
 * A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) for a path whose operations take other
 * methods: API Management lets the cors policy answer it. The inbound section of the operation the actual
 * request would reach runs on the OPTIONS request; only an answer it gives (cors) is used, anything else is
 * OperationNotFound (undefined here).
 */
export async function preflightAnswer(
  match: Extract<MatchResult<Pipeline>, { kind: 'no-operation' }>,
  description: RequestDescription,
  headers: HeaderFields,
  services: PolicyServices,
): Promise<{ readonly run: PipelineRun; readonly response: FinalResponse } | undefined> {
  const requested = firstHeader(headers, 'access-control-request-method')?.trim().toUpperCase();
  if (description.method !== 'OPTIONS' || !requested || !firstHeader(headers, 'origin')) return undefined;
  const query = new URL(description.url).searchParams;
  const candidates = match.api.operations.flatMap((operation) => {
    const parameters = operation.template.match(match.apiPath, query);
    return parameters === undefined ? [] : [{ operation, parameters }];
  });
  const target = candidates.find((c) => c.operation.method === requested) ?? candidates[0];
  if (!target) return undefined;
  const run = new PipelineRun(
    target.operation.pipeline,
    {
      ...description,
      matchedParameters: target.parameters,
      operation: {
        id: target.operation.id,
        method: target.operation.method,
        urlTemplate: target.operation.template.text,
      },
    },
    services,
  );
  const outcome = await run.onRequest();
  if (outcome.kind !== 'respond' || run.context.lastError) return undefined;
  return { run, response: outcome.response };
}
