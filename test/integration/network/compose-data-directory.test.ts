import { spawn } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseDocument } from 'yaml';
import { type RunningChild, startChild } from '../../processes/child.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cli = path.join(root, 'bin/portcullis.js');
const composeConfig = 'examples/courses/compose/gateway.yaml';

/** The `node` user of the official Node.js images (the Dockerfile's USER). */
const IMAGE_USERS: Record<string, number> = { node: 1000 };

/** What the Dockerfile's RUN lines make: directories (`mkdir -p`) and their owners (`chown user:group`). */
interface DockerfileLayout {
  readonly user: string;
  readonly directories: string[];
  readonly owners: Map<string, string>;
}

async function dockerfileLayout(dockerfile: string): Promise<DockerfileLayout> {
  const text = await readFile(path.join(root, dockerfile), 'utf8');
  const user = /^USER (\S+)/m.exec(text)?.[1] ?? 'root';
  const directories: string[] = [];
  const owners = new Map<string, string>();
  for (const [, commands] of text.matchAll(/^RUN (.+)$/gm)) {
    for (const step of commands!.split('&&').map((part) => part.trim().split(/\s+/))) {
      const [program, ...args] = step;
      const operands = args.filter((arg) => !arg.startsWith('-'));
      if (program === 'mkdir') directories.push(...operands);
      if (program === 'chown') for (const target of operands.slice(1)) owners.set(target, operands[0]!);
    }
  }
  return { user, directories, owners };
}

/** The service's named volumes in docker-compose.yml, by mount target. */
async function serviceVolumes(): Promise<{ dockerfile: string; targets: string[] }> {
  const compose = parse(await readFile(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, { build: { dockerfile: string }; volumes: string[] }>;
    volumes: Record<string, unknown>;
  };
  const service = compose.services.service!;
  const targets = service.volumes
    .map((volume) => volume.split(':'))
    .filter(([source]) => source! in compose.volumes)
    .map(([, target]) => target!);
  return { dockerfile: service.build.dockerfile, targets };
}

/**
 * The compose example's service runs as the image's `node` user (uid 1000) with auth.dataDir on a named volume. No
 * Docker engine here: the volume is prepared as Docker prepares a fresh one (a copy of the image's directory, owner
 * and mode included, as the Dockerfile's mkdir/chown lines make it), and the service's real start runs as uid 1000.
 */
describe('the compose service as the image user, on a fresh data volume', () => {
  // Running the service as uid 1000 needs root (setpriv), as CI has: without it this fails, it is not skipped.
  it('runs as root, so it can start the service as another user', () => {
    expect(process.getuid?.(), 'this file switches users with setpriv and needs root').toBe(0);
  });

  let redis: RunningRedis;
  let scratch: string;
  let layout: DockerfileLayout;
  let targets: string[];
  let uid: number;

  beforeAll(async () => {
    redis = await startRedis();
    scratch = await mkdtemp(path.join(tmpdir(), 'portcullis-compose-volume-'));
    // The configuration and policies are read by uid 1000.
    await chmod(scratch, 0o755);
    const volumes = await serviceVolumes();
    targets = volumes.targets;
    layout = await dockerfileLayout(volumes.dockerfile);
    uid = IMAGE_USERS[layout.user]!;
    expect(uid, `the Dockerfile's USER ${layout.user}`).toBeDefined();
  });
  afterAll(async () => {
    await redis?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('has the Dockerfile make every named volume of the service, owned by its USER, and auth.dataDir is one', async () => {
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) {
      expect(layout.directories, target).toContain(target);
      expect(layout.owners.get(target), target).toBe(`${layout.user}:${layout.user}`);
    }
    const config = parse(await readFile(path.join(root, composeConfig), 'utf8')) as {
      auth: { dataDir: string };
    };
    expect(targets).toContain(config.auth.dataDir);
  });

  /** A copy of the example whose configuration points at `image` (the volume) and the test's Redis. */
  async function example(name: string, image: string): Promise<{ cwd: string; dataDir: string }> {
    const cwd = path.join(scratch, name);
    await cp(path.join(root, 'examples/courses'), path.join(cwd, 'examples/courses'), { recursive: true });
    const file = path.join(cwd, composeConfig);
    const document = parseDocument(await readFile(file, 'utf8'));
    const dataDir = path.join(image, String(document.getIn(['auth', 'dataDir'])));
    document.setIn(['auth', 'dataDir'], dataDir);
    document.setIn(['state', 'redis', 'url'], redis.url);
    await writeFile(file, document.toString());
    return { cwd, dataDir };
  }

  const asImageUser = (cwd: string) => ({
    command: 'setpriv',
    args: [
      `--reuid=${uid}`,
      `--regid=${uid}`,
      '--clear-groups',
      process.execPath,
      cli,
      'service',
      '--config',
      composeConfig,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--gateway-url',
      'http://127.0.0.1:9',
    ],
    options: { cwd, env: { ...process.env, HOME: cwd, PORTCULLIS_DEBUG: '' } },
  });

  it('starts on the directory the Dockerfile prepares and writes its signing keys there, private', async () => {
    const image = path.join(scratch, 'image');
    // As Docker runs the RUN lines (as root, umask 022), then copies the directory into the fresh volume.
    for (const directory of layout.directories) await mkdir(path.join(image, directory), { recursive: true });
    for (const [target, owner] of layout.owners) {
      const [user, group] = owner.split(':');
      await chown(path.join(image, target), IMAGE_USERS[user!]!, IMAGE_USERS[group!]!);
    }
    const { cwd, dataDir } = await example('prepared', image);
    const { command, args, options } = asImageUser(cwd);
    let service: RunningChild | undefined;
    try {
      service = await startChild(command, args, {
        ...options,
        what: 'the service as uid 1000',
        timeoutMs: 60_000,
        ready: async (output) => {
          const port = /service listening on 127\.0\.0\.1:(\d+)/.exec(output)?.[1];
          if (port === undefined) return false;
          const health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
          return health?.ok === true;
        },
      });
      const keys = await stat(path.join(dataDir, 'signing-keys.json'));
      expect({ uid: keys.uid, mode: keys.mode & 0o777 }).toEqual({ uid, mode: 0o600 });
    } finally {
      await service?.stop();
    }
  });

  it('on a root-owned directory (a volume without the Dockerfile lines), exits with one line naming it', async () => {
    const image = path.join(scratch, 'root-owned');
    for (const directory of layout.directories) await mkdir(path.join(image, directory), { recursive: true });
    const { cwd, dataDir } = await example('root-owned', image);
    const { command, args, options } = asImageUser(cwd);
    const outcome = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(command, args, {
        ...options,
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 60_000,
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (status) => resolve({ status, stderr }));
    });
    expect(outcome.status).toBe(1);
    // The log lines before it, then the reason: no stack trace.
    expect(outcome.stderr).not.toMatch(/^\s+at /m);
    expect(outcome.stderr.trim().split('\n').at(-1)).toBe(
      `portcullis service: auth.dataDir ${dataDir} is not writable by this process (EACCES): it belongs to uid 0 ` +
        `(mode 0755), and the process runs as uid ${uid}; make the directory writable by that user (in a container ` +
        'image: create it and chown it to the user before USER, so a new volume copies that owner) ' +
        '(PORTCULLIS_DEBUG=1 shows where)',
    );
  });
});
