/**
 * What the backend entities add to an exchange (engine/backend-pools.ts, backend-breakers.ts,
 * backend-credentials.ts): the chosen backend's credentials on the forwarded request, its circuit breaker told of
 * each answer of the engine's own calls, and a retry sent to the backend its pool chooses now.
 */
import { headerValue } from '../../extproc/header-changes.js';
import type { HeaderFields } from '../../extproc/headers.js';
import type { ForwardedRequest, PipelineRun } from '../../policy/index.js';
import { observeBreaker } from '../backend-breakers.js';
import { withBackendCredentials } from '../backend-credentials.js';
import type { CallServices, SentRequest } from './backend-calls.js';
import type { PolicyEngine } from './policy-engine.js';
import { backendCredentialRefusal, type Refusal } from './refusals.js';

/** The request with its named backend's credentials, or the refusal when they could not be obtained. */
export async function withCredentials(
  engine: PolicyEngine,
  request: ForwardedRequest,
  run: PipelineRun,
): Promise<{ readonly request: ForwardedRequest } | { readonly refusal: Refusal }> {
  try {
    return { request: await withEntityCredentials(engine, request, run) };
  } catch (error) {
    return { refusal: backendCredentialRefusal(request.backend.backendId ?? '', error) };
  }
}

/** Envoy delivered the backend's answer: its circuit breaker, if it has one, is told. */
export async function observeAnswer(
  engine: PolicyEngine,
  sent: SentRequest,
  headers: HeaderFields,
): Promise<void> {
  const breakers = engine.backendEntities?.breakers;
  if (breakers) await observeBreaker(breakers, sent.request.backend.backendId, headers);
}

/** The request with its named backend's credentials (none without backend entities). */
export function withEntityCredentials(
  engine: PolicyEngine,
  request: ForwardedRequest,
  run: PipelineRun,
): Promise<ForwardedRequest> {
  const backendId = request.backend.backendId;
  const entity = backendId === undefined ? undefined : engine.backendEntities?.byId.get(backendId);
  return withBackendCredentials(request, entity, engine.services.identities, run.run.secrets);
}

/** The engine's call services with the backend entities' part: choosing again before a retry, breakers after. */
export function entityCallServices(
  engine: PolicyEngine,
  base: CallServices,
  runOf: () => PipelineRun | undefined,
): CallServices {
  const entities = engine.backendEntities;
  if (entities === undefined) return base;
  return {
    ...base,
    again: (sent) => sendAgain(engine, sent, runOf()),
    answerHeaders: (run) => {
      const cookie = engine.services.backends.sessionCookie?.(run.run.backend);
      return cookie === undefined ? [] : [['Set-Cookie', cookie]];
    },
    answered: async (sent, response) => {
      const backendId = sent.request.backend.backendId;
      if (backendId !== undefined && entities.breakers.has(backendId))
        await entities.breakers.observe(
          backendId,
          response.status,
          headerValue(response.headers, 'retry-after'),
        );
    },
  };
}

/**
 * A retry of a request sent to a pool's member goes to the member the pool chooses now (the one that failed may
 * have tripped), with that member's credentials, and context.Request.Url follows. Undefined: every member is
 * tripped, so the retries end with the last answer.
 */
async function sendAgain(
  engine: PolicyEngine,
  sent: SentRequest,
  run: PipelineRun | undefined,
): Promise<SentRequest | undefined> {
  const poolId = sent.request.backend.poolId;
  const backends = engine.services.backends;
  if (poolId === undefined || run === undefined || backends.choose === undefined || !sent.beforeCredentials)
    return sent;
  // A session (a pool with affinity) stays on its backend unless that one tripped; the answer's cookie then names the
  // backend the pool chooses now, under the same session id.
  const { session, backendId } = sent.request.backend;
  const breakers = engine.backendEntities?.breakers;
  if (session !== undefined && backendId !== undefined && !(await breakers?.isTripped(backendId)))
    return sent;
  const choice = await backends.choose(poolId);
  if (choice.kind !== 'backend') return undefined;
  if (choice.backend.id === sent.request.backend.backendId) return sent;
  const backend = {
    baseUrl: choice.backend.url,
    backendId: choice.backend.id,
    poolId,
    ...(session === undefined ? {} : { session: { id: session.id } }),
  };
  run.run.backend = backend;
  const request = await withEntityCredentials(engine, { ...sent.beforeCredentials, backend }, run);
  return { ...sent, request, route: engine.routes.forBackendId(choice.backend.id) };
}
