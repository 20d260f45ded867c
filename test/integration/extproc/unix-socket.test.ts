import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startExtAuthzServer } from '../../../src/extauthz/server.js';
import { passThroughExchanges } from '../../../src/extproc/passthrough.js';
import { startExtProcServer } from '../../../src/extproc/server.js';

/** Whether something accepts connections on the socket file. */
function accepts(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('the ext_proc server on a Unix domain socket', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-uds-'));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it.each([
    ['ext_proc', startExtProcServer],
    ['ext_authz', startExtAuthzServer],
  ])(
    '%s: creates the socket readable and writable by its owner only, and removes it at shutdown',
    async (_name, start) => {
      const socketPath = path.join(directory, 'engine.sock');
      const server = await start({ exchanges: passThroughExchanges }, { socketPath });
      const info = await stat(socketPath);
      expect(info.isSocket()).toBe(true);
      expect(info.mode & 0o777).toBe(0o600);
      expect(await accepts(socketPath)).toBe(true);
      await server.shutdown(1000);
      await expect(stat(socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it('takes over the socket file a killed engine left behind', async () => {
    const socketPath = path.join(directory, 'engine.sock');
    // A socket file nobody listens on any more, as a SIGKILLed engine leaves it: a process that bound it and exited.
    const leftBehind = spawnSync('python3', [
      '-c',
      'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])',
      socketPath,
    ]);
    expect(leftBehind.status).toBe(0);
    expect(await accepts(socketPath)).toBe(false);
    expect((await stat(socketPath)).isSocket()).toBe(true);
    const server = await startExtProcServer({ exchanges: passThroughExchanges }, { socketPath });
    expect(await accepts(socketPath)).toBe(true);
    await server.shutdown(1000);
  });
});
