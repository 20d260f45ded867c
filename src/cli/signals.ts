/** Resolves on the first SIGINT or SIGTERM (and stops listening, so a second one uses Node's default: exit). */
export function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals) => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      resolve(signal);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}
