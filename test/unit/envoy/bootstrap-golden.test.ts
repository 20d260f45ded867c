import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { bootstrapYaml } from '../../../src/config/envoy.js';
import { loadConfigFile, parseConfig } from '../../../src/config/load.js';
import { planRuntime, planSidecar } from '../../../src/config/plan.js';
import type { GatewayConfig } from '../../../src/config/schema.js';
import { buildSidecarBootstrap } from '../../../src/envoy/sidecar.js';
import { buildEnvoySnippet } from '../../../src/envoy/snippet.js';

/**
 * Golden files of the Envoy configuration Portcullis generates, so that a change's effect on Envoy is a diff a
 * reviewer reads, not a surprise at run time. Each case renders what `portcullis envoy-config` prints for one
 * configuration (the bootstrap, the snippet for an operator's Envoy, a backend's sidecar) and compares it byte for
 * byte with its file under test/fixtures/bootstrap-golden/<case>/ (the compose example's own envoy.yaml is its
 * golden file: docker-compose mounts it).
 *
 * After a deliberate change, rewrite them and review the diff before committing:
 *
 *   UPDATE_GOLDEN=1 npx vitest run test/unit/envoy/bootstrap-golden.test.ts
 *
 * The configurations fix every port and resolve relative files against /etc/portcullis, so the output is the same
 * on every machine.
 */

const update = process.env.UPDATE_GOLDEN === '1';
const golden = fileURLToPath(new URL('../../fixtures/bootstrap-golden/', import.meta.url));
const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));
/** Where the fixture configurations' relative files (certificates, keys) resolve: absolute, the same everywhere. */
const directory = '/etc/portcullis';

async function fixtureConfig(name: string): Promise<GatewayConfig> {
  const file = path.join(golden, name, 'gateway.yaml');
  return parseConfig(await readFile(file, 'utf8'), file);
}

async function exampleConfig(file: string): Promise<GatewayConfig> {
  return (await loadConfigFile(path.join(examples, file))).config;
}

/** As `portcullis envoy-config --snippet` prints it, without its comment header. */
const snippetYaml = async (config: GatewayConfig) =>
  stringify(buildEnvoySnippet(await planRuntime(config, { directory })), {
    lineWidth: 0,
    aliasDuplicateObjects: false,
  });

/** As `portcullis envoy-config --sidecar BACKEND` prints it. */
const sidecarYaml = (config: GatewayConfig, backend: string) =>
  stringify(buildSidecarBootstrap(planSidecar(config, backend)), { lineWidth: 0 });

const cases: readonly {
  readonly name: string;
  readonly file: string;
  readonly render: () => Promise<string>;
}[] = [
  {
    name: 'the courses example: the bootstrap',
    file: path.join(golden, 'courses/envoy.yaml'),
    render: async () =>
      bootstrapYaml(await planRuntime(await exampleConfig('courses/gateway.yaml'), { directory })),
  },
  {
    name: 'the courses example: the snippet for an operator’s Envoy',
    file: path.join(golden, 'courses/snippet.yaml'),
    render: async () => snippetYaml(await exampleConfig('courses/gateway.yaml')),
  },
  {
    name: 'the compose example (engine and service by DNS name, Redis state): its checked-in envoy.yaml',
    file: path.join(examples, 'courses/compose/envoy.yaml'),
    render: async () =>
      bootstrapYaml(await planRuntime(await exampleConfig('courses/compose/gateway.yaml'), { directory })),
  },
  {
    name: 'an edge gateway with TLS, mTLS, a management API, tracing, limits, a bypass and a version set',
    file: path.join(golden, 'edge-tls/envoy.yaml'),
    render: async () => bootstrapYaml(await planRuntime(await fixtureConfig('edge-tls'), { directory })),
  },
  {
    name: 'network mode external: listeners behind inbound rules',
    file: path.join(golden, 'network-external/envoy.yaml'),
    render: async () =>
      bootstrapYaml(await planRuntime(await fixtureConfig('network-external'), { directory })),
  },
  {
    name: 'network mode external: the sidecar in front of a private backend',
    file: path.join(golden, 'network-external/sidecar-courses.yaml'),
    render: async () => sidecarYaml(await fixtureConfig('network-external'), 'courses'),
  },
];

describe('the generated Envoy configuration matches its golden file', () => {
  for (const { name, file, render } of cases) {
    it(name, async () => {
      const rendered = await render();
      if (update) {
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, rendered);
        return;
      }
      const expected = await readFile(file, 'utf8').catch(() => {
        throw new Error(
          `${path.relative(process.cwd(), file)} is missing: run with UPDATE_GOLDEN=1 to write it`,
        );
      });
      expect(rendered, `${path.relative(process.cwd(), file)} (UPDATE_GOLDEN=1 rewrites it)`).toBe(expected);
    });
  }
});
