import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ensureHelm, helmVersion } from '../../../scripts/helm.js';
import { runCli } from '../../processes/cli.js';
import { type KubernetesObject, kubernetesValidator, renderKustomization } from './harness.js';

/**
 * The Helm chart (examples/helm/portcullis, issue #34 item 8): `helm lint` clean, `helm template` output valid for
 * Kubernetes (the schemas the Kustomize test uses), the same engine, service and Redis as the Kustomize base, its
 * gateway file passing `portcullis validate`, and signing keys from a Secret. helm is built from its Go module
 * (scripts/helm.js, once per machine). Without Go or the network to build it the tests fail, saying why: a run that
 * cannot check the chart must not pass.
 */

const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));
const chart = path.join(examples, 'helm', 'portcullis');
const validate = kubernetesValidator();
const workDir = mkdtempSync(path.join(tmpdir(), 'portcullis-helm-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

let helm: string;

beforeAll(() => {
  const outcome = ensureHelm({ quiet: true });
  if ('unavailable' in outcome) throw new Error(`helm: ${outcome.unavailable}`);
  helm = outcome.binary;
}, 900_000);

function run(args: readonly string[]): { status: number; output: string } {
  try {
    return {
      status: 0,
      output: execFileSync(helm!, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    };
  } catch (error) {
    const failure = error as { status: number; stdout: string; stderr: string };
    return { status: failure.status, output: `${failure.stdout}${failure.stderr}` };
  }
}

function template(...values: string[]): KubernetesObject[] {
  const { status, output } = run(['template', 'gw', chart, '--namespace', 'portcullis', ...values]);
  expect(status, output).toBe(0);
  return parseAllDocuments(output)
    .map((document) => document.toJS() as KubernetesObject | null)
    .filter((object): object is KubernetesObject => object !== null);
}

const named = (objects: readonly KubernetesObject[], kind: string, name: string) =>
  objects.find((object) => object.kind === kind && object.metadata.name === name) as any;

/** The parts of an object that are its behaviour, not its bookkeeping (labels, the rollout checksum). */
function behaviour(object: any): unknown {
  const copy = structuredClone(object);
  delete copy.metadata.labels;
  delete copy.metadata.namespace;
  if (copy.spec?.template?.metadata) delete copy.spec.template.metadata;
  return copy;
}

/** Writes the ConfigMap's files into a folder and runs `portcullis validate` on its gateway file. */
async function validateConfigMap(
  config: { data: Record<string, string> },
  extra: Record<string, string> = {},
) {
  const folder = mkdtempSync(path.join(workDir, 'config-'));
  for (const [name, content] of Object.entries({ ...config.data, ...extra }))
    writeFileSync(path.join(folder, name), content);
  return runCli(['validate', path.join(folder, 'gateway.yaml')]);
}

describe(`the Helm chart (examples/helm/portcullis, helm ${helmVersion})`, () => {
  it('passes helm lint --strict', () => {
    const { status, output } = run(['lint', '--strict', chart]);
    expect(status, output).toBe(0);
    expect(output).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it('renders objects valid for Kubernetes 1.34: the engine, the service and Redis of the Kustomize base', () => {
    const rendered = template();
    const errors = rendered.flatMap((object) =>
      validate(object).map((error) => `${object.kind} ${object.metadata.name}: ${error}`),
    );
    expect(errors).toEqual([]);
    const base = renderKustomization(path.join(examples, 'kubernetes')).map(({ object }) => object);
    const kept = base.filter(
      (object) => object.kind !== 'Namespace' && !['courses'].includes(object.metadata.name),
    );
    expect(rendered.map((object) => `${object.kind}/${object.metadata.name}`).sort()).toEqual(
      kept.map((object) => `${object.kind}/${object.metadata.name}`).sort(),
    );
    for (const object of kept) {
      const mine = named(rendered, object.kind, object.metadata.name);
      expect(behaviour(mine), `${object.kind}/${object.metadata.name}`).toEqual(behaviour(object));
      expect(mine.metadata.labels['app.kubernetes.io/part-of']).toBe('portcullis');
    }
    // A changed gateway file rolls the pods out.
    const annotation = named(rendered, 'Deployment', 'portcullis-engine').spec.template.metadata.annotations;
    expect(annotation['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('without Redis renders no Redis; with other values, replicas and resources follow them', () => {
    const rendered = template(
      '--set',
      'redis.enabled=false',
      '--set',
      'engine.replicas=5',
      '--set',
      'engine.resources.limits.memory=1Gi',
    );
    expect(named(rendered, 'Deployment', 'redis')).toBeUndefined();
    const engine = named(rendered, 'Deployment', 'portcullis-engine');
    expect(engine.spec.replicas).toBe(5);
    expect(engine.spec.template.spec.containers[0].resources.limits.memory).toBe('1Gi');
  });

  it('renders a gateway file that passes `portcullis validate`', async () => {
    const outcome = await validateConfigMap(named(template(), 'ConfigMap', 'portcullis-config'));
    expect(outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
  });

  it('takes the signing keys from a Secret: mounted beside the gateway file, named by it, several service replicas allowed', async () => {
    const refused = run(['template', 'gw', chart, '--set', 'service.replicas=2']);
    expect(refused.status).toBe(1);
    expect(refused.output).toContain('service.replicas > 1 needs signingKeys.existingSecret');

    const rendered = template(
      '--set',
      'signingKeys.existingSecret=portcullis-keys',
      '--set',
      'service.replicas=2',
    );
    expect(rendered.flatMap((object) => validate(object))).toEqual([]);
    const service = named(rendered, 'Deployment', 'portcullis-service');
    expect(service.spec.replicas).toBe(2);
    const volume = service.spec.template.spec.volumes.find(
      (each: { name: string }) => each.name === 'config',
    );
    expect(volume.projected.sources).toEqual([
      { configMap: { name: 'portcullis-config' } },
      { secret: { name: 'portcullis-keys', items: [{ key: 'keys.json', path: 'signing-keys.json' }] } },
    ]);
    const config = named(rendered, 'ConfigMap', 'portcullis-config');
    expect(config.data['gateway.yaml']).toContain('signingKeys: { file: signing-keys.json }');
    // The Secret's content as a user makes it: a JWK Set of private keys with kid and alg.
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const keys = JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'k1', alg: 'ES256' }] });
    const outcome = await validateConfigMap(config, { 'signing-keys.json': keys });
    expect(outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
  });

  it("the chart's gateway file and policies are the Kustomize example's", () => {
    const base = renderKustomization(path.join(examples, 'kubernetes')).find(
      ({ object }) => object.kind === 'ConfigMap',
    )!.object as unknown as { data: Record<string, string> };
    expect(named(template(), 'ConfigMap', 'portcullis-config').data).toEqual(base.data);
  });
});
