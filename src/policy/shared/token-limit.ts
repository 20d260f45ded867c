/**
 * llm-token-limit and azure-openai-token-limit: one policy under two names, as API Management has it. Tokens per
 * key are limited per minute (a 60-second sliding window; 429 when exceeded) and/or by a quota over a calendar
 * period (403 when exceeded). The counters are the state module's, so they hold across engine processes with Redis.
 *
 * Counting follows API Management's documentation: the prompt is estimated with the model's tokenizer when
 * `estimate-prompt-tokens` is true — and always for a streamed request — and counted as the call arrives, so a
 * prompt that does not fit is refused before the backend is called. The rest comes from the `usage` the backend
 * reports (read from its answer or its event stream as it passes), counted when the answer is complete. Without an
 * estimate, a call is admitted while the key is under its limit, and a call that overshoots blocks the following
 * ones until the window frees enough tokens. A reported total below the estimate is not given back.
 */
import { defineElement } from '../element.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, EMPTY, int, oneOf, str } from '../schema.js';
import { llmCall } from './llm-exchange.js';
import { preloadTokenizers } from './prompt-tokens.js';
import { timeSpan } from './quota-counting.js';

const PERIODS = ['Hourly', 'Daily', 'Weekly', 'Monthly', 'Yearly'] as const;
type QuotaPeriod = (typeof PERIODS)[number];

const name = str({ expression: false });

const ATTRIBUTES = {
  'counter-key': str({ required: true }),
  'tokens-per-minute': int({ min: 1 }),
  'token-quota': int({ min: 1, expression: false }),
  'token-quota-period': oneOf(PERIODS, { expression: false }),
  'estimate-prompt-tokens': bool({ default: false, expression: false }),
  'retry-after-header-name': name,
  'retry-after-variable-name': name,
  'remaining-quota-tokens-header-name': name,
  'remaining-quota-tokens-variable-name': name,
  'remaining-tokens-header-name': name,
  'remaining-tokens-variable-name': name,
  'tokens-consumed-header-name': name,
  'tokens-consumed-variable-name': name,
};

/** The calendar window (UTC) a quota period is counted in at `nowMs`: its start and its length. */
export function quotaPeriodWindow(
  period: QuotaPeriod,
  nowMs: number,
): { originMs: number; periodSeconds: number } {
  const now = new Date(nowMs);
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  let start: number;
  let end: number;
  switch (period) {
    case 'Hourly':
      start = Date.UTC(y, m, d, now.getUTCHours());
      end = start + 3_600_000;
      break;
    case 'Daily':
      start = Date.UTC(y, m, d);
      end = start + 86_400_000;
      break;
    case 'Weekly':
      // Weeks start on Monday (ISO 8601).
      start = Date.UTC(y, m, d - ((now.getUTCDay() + 6) % 7));
      end = start + 7 * 86_400_000;
      break;
    case 'Monthly':
      start = Date.UTC(y, m, 1);
      end = Date.UTC(y, m + 1, 1);
      break;
    case 'Yearly':
      start = Date.UTC(y, 0, 1);
      end = Date.UTC(y + 1, 0, 1);
      break;
  }
  return { originMs: start, periodSeconds: (end - start) / 1000 };
}

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

/** Declares the token limit under one of its names (the element files `llm-token-limit.ts`, `azure-openai-…`). */
export function defineTokenLimit(definition: { readonly name: string; readonly summary: string }) {
  const element = definition.name;
  return defineElement({
    name: definition.name,
    summary: definition.summary,
    sections: ['inbound'],
    scopes: ALL_SCOPES,
    attributes: ATTRIBUTES,
    content: EMPTY,
    // The prompt is read for the estimate, and for `stream`, which makes API Management estimate it anyway.
    body: 'read',
    touchesResponse: true,
    watchesResponseBody: true,
    compile(node, c) {
      const perMinute = node.getter('tokens-per-minute');
      const quota = node.literal('token-quota');
      const period = node.literal('token-quota-period');
      if (perMinute === undefined && quota === undefined && period === undefined)
        c.error(
          node,
          'attribute',
          `${element} needs tokens-per-minute, or token-quota with token-quota-period, got neither`,
        );
      if (quota !== undefined && period === undefined)
        c.error(node, 'attribute', `${element}/@token-quota needs token-quota-period, got none`);
      if (period !== undefined && quota === undefined)
        c.error(node, 'attribute', `${element}/@token-quota-period needs token-quota, got none`);
      preloadTokenizers();
      const counterKey = node.getter('counter-key');
      const estimate = node.literal('estimate-prompt-tokens');
      const retryAfterHeader = nonEmpty(node.literal('retry-after-header-name')) ?? 'Retry-After';
      const retryAfterVariable = nonEmpty(node.literal('retry-after-variable-name'));
      const remainingHeader = nonEmpty(node.literal('remaining-tokens-header-name'));
      const remainingVariable = nonEmpty(node.literal('remaining-tokens-variable-name'));
      const remainingQuotaHeader = nonEmpty(node.literal('remaining-quota-tokens-header-name'));
      const remainingQuotaVariable = nonEmpty(node.literal('remaining-quota-tokens-variable-name'));
      const consumedHeader = nonEmpty(node.literal('tokens-consumed-header-name'));
      const consumedVariable = nonEmpty(node.literal('tokens-consumed-variable-name'));

      const refuse = (
        run: RunContext,
        reason: string,
        status: number,
        message: string,
        retryAfter: number,
        headers: [string, string][],
      ): never => {
        if (retryAfterVariable !== undefined) run.context.variables.set(retryAfterVariable, retryAfter);
        throw new PolicyError(reason, message, status, message, [
          [retryAfterHeader, String(retryAfter)],
          ...headers,
        ]);
      };

      return async (run): Promise<'next'> => {
        const key = counterKey(run);
        const limits = run.services.limits;
        const call = llmCall(run);
        const prompt = estimate || call.streamed ? call.promptTokens() : 0;
        // Counted as the call arrives when there is an estimate; otherwise only asked (is the key under its limit?).
        const arriving =
          prompt > 0 ? { amount: prompt, mode: 'consume' as const } : { amount: 1, mode: 'check' as const };
        const headers: [string, string][] = [];
        const windowKey = `llm-tokens:${key}`;
        const tpm = perMinute?.(run);
        if (tpm !== undefined) {
          const result = await limits.slidingWindow({
            key: windowKey,
            limit: tpm,
            periodSeconds: 60,
            ...arriving,
          });
          const remaining = arriving.mode === 'consume' ? result.remaining : Math.max(0, tpm - result.used);
          if (remainingVariable !== undefined) run.context.variables.set(remainingVariable, remaining);
          if (remainingHeader !== undefined) headers.push([remainingHeader, String(remaining)]);
          if (!result.allowed)
            refuse(
              run,
              'TokenLimitExceeded',
              429,
              `Token limit is exceeded. Try again in ${result.retryAfterSeconds} seconds.`,
              result.retryAfterSeconds,
              headers,
            );
        }
        const quotaKey = `llm-token-quota:${key}`;
        const window = period === undefined ? undefined : quotaPeriodWindow(period, run.services.clock.now());
        if (quota !== undefined && window !== undefined) {
          const result = await limits.quota({
            key: quotaKey,
            ...window,
            callLimit: quota,
            kilobyteLimit: undefined,
            calls: arriving.mode === 'consume' ? prompt : 0,
            bytes: 0,
            mode: arriving.mode,
          });
          const remaining = Math.max(0, quota - result.calls);
          if (remainingQuotaVariable !== undefined)
            run.context.variables.set(remainingQuotaVariable, remaining);
          if (remainingQuotaHeader !== undefined) headers.push([remainingQuotaHeader, String(remaining)]);
          if (!result.allowed) {
            const renews = result.renewsInSeconds ?? window.periodSeconds;
            refuse(
              run,
              'TokenQuotaExceeded',
              403,
              `Token quota is exceeded. Try again in ${timeSpan(renews)}.`,
              renews,
              headers,
            );
          }
        }
        run.responseHeaderAdditions.push(...headers);
        if (consumedVariable !== undefined) run.context.variables.set(consumedVariable, prompt);
        call.onUsage(async (usage, ended) => {
          const rest = usage.totalTokens - prompt;
          if (rest > 0) {
            if (tpm !== undefined)
              await limits.slidingWindow({
                key: windowKey,
                limit: tpm,
                periodSeconds: 60,
                amount: rest,
                mode: 'add',
              });
            if (quota !== undefined && window !== undefined)
              await limits.quota({
                key: quotaKey,
                ...window,
                callLimit: quota,
                kilobyteLimit: undefined,
                calls: rest,
                bytes: 0,
                mode: 'add',
              });
          }
          if (consumedVariable !== undefined)
            ended.context.variables.set(consumedVariable, usage.totalTokens);
          // Reaches the client when the answer was held for its usage (JSON); a stream's headers are gone by now.
          if (consumedHeader !== undefined)
            ended.responseHeaderAdditions.push([consumedHeader, String(usage.totalTokens)]);
        });
        return 'next';
      };
    },
  });
}
