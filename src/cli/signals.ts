/**
 * Resolves on the first SIGINT or SIGTERM (and stops listening, so a second one uses Node's default: exit). With
 * `exitWithParent`, also when the process that started this one is gone — a child of `portcullis up` must not
 * outlive it, even when `up` itself was killed without a chance to stop its children.
 */
export function waitForStopSignal(
  options: { exitWithParent?: boolean } = {},
): Promise<NodeJS.Signals | 'parent-gone' | 'output-closed'> {
  return new Promise((resolve) => {
    const parent = process.ppid;
    const watch = options.exitWithParent
      ? setInterval(() => {
          if (process.ppid !== parent) finish('parent-gone');
        }, 500)
      : undefined;
    watch?.unref();
    const handler = (signal: NodeJS.Signals) => finish(signal);
    function finish(reason: NodeJS.Signals | 'parent-gone' | 'output-closed') {
      stopRequests.delete(finish);
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      if (watch) clearInterval(watch);
      resolve(reason);
    }
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    stopRequests.add(finish);
  });
}

/** Whoever waits for a stop now (waitForStopSignal), to be told of one that is no signal. */
const stopRequests = new Set<(reason: 'output-closed') => void>();

/**
 * Standard output's reader went away (`portcullis up … | head -1` once head has its line): a command waiting for a
 * stop (up, with its children) stops as on Ctrl-C rather than exiting and leaving them running. False when nothing
 * waits, so the caller may simply exit.
 */
export function stopForClosedOutput(): boolean {
  if (stopRequests.size === 0) return false;
  for (const finish of [...stopRequests]) finish('output-closed');
  return true;
}
