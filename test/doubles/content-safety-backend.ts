/**
 * An Azure AI Content Safety service for tests: a real HTTP server on a free loopback port speaking the REST API
 * llm-content-safety calls (`POST /contentsafety/text:analyze` and `/contentsafety/text:shieldPrompt`, each with
 * `?api-version=`), deterministic instead of a model:
 *
 * - harm categories: each configured trigger word found in the text (case-insensitively) gives its category that
 *   severity (the highest found wins); FourSeverityLevels rounds down to 0, 2, 4, 6 as the service does;
 * - blocklists: named lists of terms, matched case-insensitively; an unknown list name is a 404 as in the service;
 * - prompt attacks: the user prompt or a document containing the attack marker.
 *
 * With `key`, a request must carry `Authorization: Bearer <key>` (else 401, as the service answers a wrong key).
 * Every request is recorded, so a test can show what was screened and that nothing was called at all.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HarmCategory = 'Hate' | 'SelfHarm' | 'Sexual' | 'Violence';

export interface ContentSafetyOptions {
  /** Words that raise a category's severity (0–7). */
  readonly triggers?: Readonly<
    Record<string, { readonly category: HarmCategory; readonly severity: number }>
  >;
  readonly blocklists?: Readonly<Record<string, readonly string[]>>;
  /** Text that marks a prompt attack. */
  readonly attackMarker?: string;
  readonly key?: string;
}

export interface ContentSafetyRequest {
  readonly operation: 'analyze' | 'shieldPrompt' | undefined;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly json: Record<string, unknown> | undefined;
}

export interface ContentSafetyBackend {
  readonly url: string;
  readonly received: ContentSafetyRequest[];
  close(): Promise<void>;
}

export const DEFAULT_TRIGGERS: NonNullable<ContentSafetyOptions['triggers']> = {
  grudge: { category: 'Hate', severity: 3 },
  loathe: { category: 'Hate', severity: 6 },
  punch: { category: 'Violence', severity: 5 },
  despair: { category: 'SelfHarm', severity: 4 },
  explicit: { category: 'Sexual', severity: 7 },
};
export const DEFAULT_ATTACK_MARKER = 'ignore all previous instructions';

const CATEGORIES: readonly HarmCategory[] = ['Hate', 'SelfHarm', 'Sexual', 'Violence'];

export async function startContentSafetyBackend(
  options: ContentSafetyOptions = {},
): Promise<ContentSafetyBackend> {
  const triggers = options.triggers ?? DEFAULT_TRIGGERS;
  const blocklists = options.blocklists ?? {};
  const marker = (options.attackMarker ?? DEFAULT_ATTACK_MARKER).toLowerCase();
  const received: ContentSafetyRequest[] = [];

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const operation = /\/contentsafety\/text:(analyze|shieldPrompt)$/.exec(url.pathname)?.[1] as
        | ContentSafetyRequest['operation']
        | undefined;
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      received.push({ operation, url: request.url ?? '', headers: request.headers, json });
      const reply = (status: number, body: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const error = (status: number, code: string, message: string) =>
        reply(status, { error: { code, message } });

      if (options.key !== undefined && request.headers.authorization !== `Bearer ${options.key}`)
        return error(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint.');
      if (request.method !== 'POST' || operation === undefined)
        return error(404, 'NotFound', 'Resource not found.');
      if (!url.searchParams.get('api-version'))
        return error(400, 'InvalidRequest', 'api-version is required.');
      if (json === undefined) return error(400, 'InvalidRequestBody', 'The body is not JSON.');

      if (operation === 'shieldPrompt') {
        const attacked = (text: unknown) => typeof text === 'string' && text.toLowerCase().includes(marker);
        const documents = Array.isArray(json.documents) ? json.documents : [];
        return reply(200, {
          userPromptAnalysis: { attackDetected: attacked(json.userPrompt) },
          documentsAnalysis: documents.map((d) => ({ attackDetected: attacked(d) })),
        });
      }

      const text = String(json.text ?? '').toLowerCase();
      const names = Array.isArray(json.blocklistNames) ? json.blocklistNames.map(String) : [];
      const unknown = names.find((name) => blocklists[name] === undefined);
      if (unknown !== undefined) return error(404, 'NotFound', `Blocklist ${unknown} is not found.`);
      const blocklistsMatch = names.flatMap((name) =>
        blocklists[name]!.filter((term) => text.includes(term.toLowerCase())).map((term, index) => ({
          blocklistName: name,
          blocklistItemId: `${name}-${index}`,
          blocklistItemText: term,
        })),
      );
      const four = json.outputType !== 'EightSeverityLevels';
      const wanted = Array.isArray(json.categories) ? (json.categories as HarmCategory[]) : CATEGORIES;
      const categoriesAnalysis = wanted.map((category) => {
        let severity = 0;
        for (const [word, trigger] of Object.entries(triggers))
          if (trigger.category === category && text.includes(word.toLowerCase()))
            severity = Math.max(severity, trigger.severity);
        return { category, severity: four ? Math.min(6, severity - (severity % 2)) : severity };
      });
      return reply(200, { blocklistsMatch, categoriesAnalysis });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
