/**
 * The side calls of the AI gateway elements to a named backend (embeddings for the semantic cache, Azure AI
 * Content Safety): a JSON POST, bounded in time. Portcullis has no managed identity, so the call carries the
 * credentials the request holds when the element runs (`Authorization`, `api-key`), which a policy sets before
 * the element as it would for the model's backend; nothing else of the client's request goes along.
 */
import type { RunContext } from '../runtime.js';
import { allowedMs } from './work-budget.js';

/** The request headers a side call carries over. */
const CREDENTIAL_HEADERS = ['Authorization', 'api-key'] as const;

/** Why a side call produced no answer; `status` when the backend answered with an error. */
export class BackendCallError extends Error {
  override readonly name = 'BackendCallError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * POSTs `body` to the named backend at `url(base)` and returns the parsed JSON answer. Throws BackendCallError
 * for an unknown backend, a failed or timed-out call, a status other than 2xx, or an answer that is not JSON.
 */
export async function postToBackend(
  run: RunContext,
  backendId: string,
  url: (base: URL) => URL,
  body: unknown,
  timeoutMs: number,
): Promise<unknown> {
  const backend = run.services.backends.get(backendId);
  if (backend === undefined) throw new BackendCallError(`no backend "${backendId}" is configured`);
  const target = url(new URL(backend.url));
  const headers: [string, string][] = [
    ['Content-Type', 'application/json'],
    ['Accept', 'application/json'],
  ];
  for (const name of CREDENTIAL_HEADERS) {
    const value = run.context.request.headers.getJoined(name);
    if (value !== undefined) headers.push([name, value]);
  }
  let answer: Awaited<ReturnType<typeof run.services.fetch>>;
  try {
    answer = await run.services.fetch({
      method: 'POST',
      url: target.toString(),
      headers,
      body: Buffer.from(JSON.stringify(body)),
      timeoutMs: allowedMs(run.services, timeoutMs),
    });
  } catch (error) {
    const timedOut = (error as { code?: string }).code === 'TIMEOUT';
    throw new BackendCallError(
      `backend "${backendId}" ${timedOut ? `did not answer within ${timeoutMs} ms` : `could not be reached (${error instanceof Error ? error.message : String(error)})`}`,
    );
  }
  if (answer.status < 200 || answer.status > 299)
    throw new BackendCallError(`backend "${backendId}" answered ${answer.status}`, answer.status);
  try {
    return JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw new BackendCallError(
      `backend "${backendId}" answered ${answer.status} with a body that is not JSON`,
    );
  }
}

/** `base` with `segment` appended to its path unless the path already ends with it (query kept). */
export function withPathSuffix(base: URL, segment: string): URL {
  const url = new URL(base);
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith(segment)) url.pathname = `${path}${segment}`;
  return url;
}
