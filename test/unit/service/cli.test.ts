import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyPassword } from '../../../src/auth/index.js';
import { UsageError } from '../../../src/cli/command.js';
import { command as serviceCommand } from '../../../src/cli/commands/service.js';
import { runCli } from '../../processes/cli.js';

describe.concurrent('portcullis hash-password', () => {
  it('prints an scrypt hash of the password on standard input (one trailing newline is not part of it)', async () => {
    const { status, stdout } = await runCli(['hash-password'], { input: 'correct horse\n' });
    expect(status).toBe(0);
    const hash = stdout.trim();
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horse\n', hash)).toBe(false);
  });
});

describe.concurrent('portcullis service', () => {
  it('refuses a configuration whose sections do not fit together, naming file, line and column', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-cli-'));
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(file, 'apis: []\nmcp: { pageSize: 10 }\n');
    const { status, stderr } = await runCli([
      'service',
      '--config',
      file,
      '--port',
      '0',
      '--gateway-url',
      'http://127.0.0.1:1',
    ]);
    expect(status).toBe(1);
    expect(stderr).toContain(
      `${file}:2:1: mcp: the MCP endpoint needs an "auth" section (its tokens come from the authorization server)`,
    );
  });

  it('refuses a gateway URL that is not an origin before reading the configuration', async () => {
    const error = await serviceCommand
      .run(['--config', 'never-read.yaml', '--port', '0', '--gateway-url', 'ftp://x/y'])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe('--gateway-url must be an http(s) origin, got "ftp://x/y"');
  });
});
