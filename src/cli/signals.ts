/**
 * Resolves on the first SIGINT or SIGTERM (and stops listening, so a second one uses Node's default: exit). With
 * `exitWithParent`, also when the process that started this one is gone — a child of `portcullis up` must not
 * outlive it, even when `up` itself was killed without a chance to stop its children.
 */
export function waitForStopSignal(
  options: { exitWithParent?: boolean } = {},
): Promise<NodeJS.Signals | 'parent-gone'> {
  return new Promise((resolve) => {
    const parent = process.ppid;
    const watch = options.exitWithParent
      ? setInterval(() => {
          if (process.ppid !== parent) finish('parent-gone');
        }, 500)
      : undefined;
    watch?.unref();
    const handler = (signal: NodeJS.Signals) => finish(signal);
    function finish(reason: NodeJS.Signals | 'parent-gone') {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      if (watch) clearInterval(watch);
      resolve(reason);
    }
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}
