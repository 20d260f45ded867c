import type { PhaseDeadline } from '../extproc/exchange.js';
import type { WorkDeadline } from '../policy/index.js';

/**
 * What the engine still has to do after the slow work of a phase (the rest of the section, on-error, the answer),
 * asked for on top of the work itself: without it a call that times out at its own deadline would meet Envoy's.
 */
export const answerSlackMs = 1000;

/**
 * A run's `deadline` on the ext_proc stream's: slow work asks Envoy to wait for it plus `answerSlackMs`, up to
 * `maxMs` (what Envoy accepts, contract.ts `maxMessageTimeoutMs`: a longer ask is ignored, and the phase would end
 * in Envoy's 504), and is given what fits in what Envoy grants.
 */
export function workDeadline(phase: PhaseDeadline, maxMs = Number.POSITIVE_INFINITY): WorkDeadline {
  return {
    reserve(ms) {
      const granted = phase.extend(Math.min(ms + answerSlackMs, maxMs));
      // Whole milliseconds: timers and AbortSignal.timeout take no fractions.
      return Math.max(0, Math.floor(Math.min(ms, granted - answerSlackMs)));
    },
  };
}
