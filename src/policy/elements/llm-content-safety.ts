import { defineElement } from '../element.js';
import type { Getter } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, elements, int, oneOf, str, text } from '../schema.js';
import { BackendCallError, postToBackend, withPathSuffix } from '../shared/ai-backend-call.js';
import { jsonBody, promptMessages } from '../shared/prompt-messages.js';

/** The Azure AI Content Safety REST API version the calls name (text:analyze and text:shieldPrompt are GA in it). */
export const CONTENT_SAFETY_API_VERSION = '2024-09-01';

/** Azure AI Content Safety analyses at most this many characters per call (text and user prompt alike). */
export const CONTENT_SAFETY_MAX_CHARACTERS = 10_000;

const CONTENT_SAFETY_TIMEOUT_MS = 10_000;

/** What API Management answers a refused prompt with (403, `{"statusCode":403,"message":…}`). */
export const CONTENT_SAFETY_REFUSAL = 'Request failed content safety check.';

const CATEGORIES = ['Hate', 'SelfHarm', 'Sexual', 'Violence'] as const;

interface AnalyzeAnswer {
  readonly blocklistsMatch?: readonly {
    readonly blocklistName?: string;
    readonly blocklistItemText?: string;
  }[];
  readonly categoriesAnalysis?: readonly { readonly category?: string; readonly severity?: number }[];
}

interface ShieldAnswer {
  readonly userPromptAnalysis?: { readonly attackDetected?: boolean };
  readonly documentsAnalysis?: readonly { readonly attackDetected?: boolean }[];
}

/**
 * The text the service screens: every message of a language-model request (system ones too) joined, as API
 * Management runs the policy "on a concatenation of all text content in the request"; any other body as it is.
 */
function screenedText(run: RunContext): string {
  const bytes = run.context.request.body?.bytes;
  const messages = promptMessages(jsonBody(bytes));
  if (messages === undefined) return bytes === undefined ? '' : Buffer.from(bytes).toString('utf8');
  return messages
    .map((m) => m.text)
    .filter((t) => t !== '')
    .join('\n');
}

/**
 * Screens the prompt with Azure AI Content Safety at the named backend before the model sees it: harm categories
 * at or over their threshold, blocklist hits and (shield-prompt) prompt attacks are refused with 403, as API
 * Management does. A backend that answers with an error refuses too (what API Management is seen to do when the
 * call fails, e.g. on a 401); a backend that cannot be reached, or a prompt over the service's character limit,
 * is a 500, as documented.
 */
export const llmContentSafety = defineElement({
  name: 'llm-content-safety',
  summary: 'Refuses prompts that Azure AI Content Safety finds harmful, blocklisted or attacking (403).',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: {
    'backend-id': str({ required: true }),
    'shield-prompt': bool({ default: false }),
    'enforce-on-completions': bool({ default: false, expression: false }),
  },
  content: elements(
    {
      name: 'categories',
      max: 1,
      attributes: {
        'output-type': oneOf(['FourSeverityLevels', 'EightSeverityLevels'], {
          default: 'FourSeverityLevels',
        }),
      },
      content: elements({
        name: 'category',
        attributes: {
          name: oneOf(CATEGORIES, { required: true }),
          threshold: int({ required: true, min: 0, max: 7 }),
        },
      }),
    },
    { name: 'blocklists', max: 1, content: elements({ name: 'id', content: text(true, true) }) },
  ),
  body: 'read',
  compile(node, c) {
    if (node.literal('enforce-on-completions') === true)
      c.error(
        node,
        'not-implemented',
        '"llm-content-safety/@enforce-on-completions" is not implemented yet (completions are not screened)',
      );
    const backendId = node.getter('backend-id');
    const shieldPrompt = node.getter('shield-prompt');
    const categories = node.child('categories');
    const outputType = categories?.getter('output-type');
    const thresholds: [Getter<string>, Getter<number>][] = (categories?.childrenNamed('category') ?? []).map(
      (ch) => [ch.getter('name'), ch.getter('threshold')],
    );
    const blocklists = (node.child('blocklists')?.childrenNamed('id') ?? []).map((id) => id.text());

    const call = async <T>(run: RunContext, operation: string, body: unknown): Promise<T> => {
      const id = backendId(run);
      try {
        return (await postToBackend(
          run,
          id,
          (base) => {
            const url = withPathSuffix(base, `/contentsafety/text:${operation}`);
            url.searchParams.set('api-version', CONTENT_SAFETY_API_VERSION);
            return url;
          },
          body,
          CONTENT_SAFETY_TIMEOUT_MS,
        )) as T;
      } catch (error) {
        const message = `content safety ${operation}: ${error instanceof Error ? error.message : String(error)}`;
        if (error instanceof BackendCallError && error.status !== undefined)
          throw new PolicyError('ContentSafetyCheckFailed', message, 403, CONTENT_SAFETY_REFUSAL);
        throw new PolicyError('ContentSafetyUnavailable', message, 500);
      }
    };

    return async (run): Promise<'next'> => {
      const screened = screenedText(run);
      if (screened === '') return 'next';
      if (screened.length > CONTENT_SAFETY_MAX_CHARACTERS)
        throw new PolicyError(
          'ContentSafetyTextTooLong',
          `content safety: the prompt has ${screened.length} characters, over the service's limit of ${CONTENT_SAFETY_MAX_CHARACTERS}`,
          500,
        );
      const wanted = thresholds.map(([name, threshold]) => ({ name: name(run), threshold: threshold(run) }));
      const lists = blocklists.map((id) => id(run).trim()).filter((id) => id !== '');
      const [analysis, shield] = await Promise.all([
        wanted.length > 0 || lists.length > 0
          ? call<AnalyzeAnswer>(run, 'analyze', {
              text: screened,
              ...(wanted.length > 0 ? { categories: wanted.map((w) => w.name) } : {}),
              ...(lists.length > 0 ? { blocklistNames: lists, haltOnBlocklistHit: true } : {}),
              outputType: outputType?.(run) ?? 'FourSeverityLevels',
            })
          : undefined,
        shieldPrompt(run)
          ? call<ShieldAnswer>(run, 'shieldPrompt', { userPrompt: screened, documents: [] })
          : undefined,
      ]);
      const listed = analysis?.blocklistsMatch?.[0];
      if (listed !== undefined)
        throw new PolicyError(
          'ContentSafetyBlocklist',
          `content safety: the prompt matches blocklist "${listed.blocklistName ?? ''}"`,
          403,
          CONTENT_SAFETY_REFUSAL,
        );
      for (const { name, threshold } of wanted) {
        const severity = analysis?.categoriesAnalysis?.find((a) => a.category === name)?.severity ?? 0;
        if (severity >= threshold)
          throw new PolicyError(
            'ContentSafetyCategory',
            `content safety: ${name} severity ${severity} reaches the threshold ${threshold}`,
            403,
            CONTENT_SAFETY_REFUSAL,
          );
      }
      if (
        shield?.userPromptAnalysis?.attackDetected === true ||
        shield?.documentsAnalysis?.some((d) => d.attackDetected)
      )
        throw new PolicyError(
          'ContentSafetyPromptAttack',
          'content safety: a prompt attack was detected',
          403,
          CONTENT_SAFETY_REFUSAL,
        );
      return 'next';
    };
  },
});
