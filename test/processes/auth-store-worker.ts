/**
 * A second process on an embedded data directory, for test/integration/auth/stores/embedded.test.ts:
 *   write DIR        writes refresh tokens on 4 lanes and prints each id once its write is awaited (acknowledged),
 *                    until killed (or 100 000 writes)
 *   consume DIR N    prints "ready", waits for a line on standard input (so racers start together), tries to
 *                    consume codes code-0 … code-(N-1), prints the id of each it won, then exits
 */
import { createEmbeddedStores } from '../../src/auth/stores/embedded.js';
import { openEmbeddedState } from '../../src/state/embedded.js';

const [mode, directory, count] = process.argv.slice(2);
const state = openEmbeddedState(directory!);
const stores = createEmbeddedStores(state);
const now = Math.floor(Date.now() / 1000);

if (mode === 'write') {
  let next = 0;
  const lane = async () => {
    while (next < 100_000) {
      const id = `rt-${next++}`;
      await stores.refreshTokens.put({
        id,
        grantId: 'g',
        clientId: 'c',
        sub: 'alice',
        scope: ['read:courses-work'],
        resource: 'r',
        issuedAt: now,
        expiresAt: now + 3600,
        consumed: false,
      });
      // stdout on a pipe is synchronous on Linux: once this returns, the parent can read the acknowledgement
      process.stdout.write(`${id}\n`);
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
} else if (mode === 'consume') {
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.pause();
  for (let i = 0; i < Number(count); i++) {
    if (await stores.codes.consume(`code-${i}`)) process.stdout.write(`code-${i}\n`);
  }
} else {
  throw new TypeError(`unknown mode ${mode}`);
}
await stores.close();
await state.close();
