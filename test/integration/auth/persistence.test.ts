import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover, obtainTokens, register, startServer } from '../../processes/auth-server.js';

describe('data directory', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'portcullis-auth-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('keeps registered clients and signing keys across a restart, without secrets in clear', async () => {
    const first = await startServer({ dataDir });
    const as1 = await discover(first);
    const client = await register(as1, 'client_secret_post');
    const kids1 = ((await (await fetch(as1.jwks_uri!)).json()) as { keys: { kid: string }[] }).keys.map(
      (k) => k.kid,
    );
    await first.close();

    const saved = await readFile(join(dataDir, 'clients.json'), 'utf8');
    expect(saved).toContain(client.client.client_id);
    expect(saved).not.toContain(client.secret!);
    expect((await stat(join(dataDir, 'signing-keys.json'))).mode & 0o777).toBe(0o600);

    const second = await startServer({ dataDir });
    try {
      const as2 = await discover(second);
      const kids2 = ((await (await fetch(as2.jwks_uri!)).json()) as { keys: { kid: string }[] }).keys.map(
        (k) => k.kid,
      );
      expect(kids2).toEqual(kids1);
      // the client registered before the restart authenticates with its secret after it
      const { tokens } = await obtainTokens(second, as2, client);
      expect(tokens.access_token).toBeTruthy();
    } finally {
      await second.close();
    }
  });
});
