import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parseAllDocuments } from 'yaml';

/** One Kubernetes object of an example, with the file it came from (for messages). */
export interface Manifest {
  readonly file: string;
  readonly object: KubernetesObject;
}

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

const schemaDir = fileURLToPath(new URL('../../fixtures/k8s-schemas/', import.meta.url));
const schemaBaseId = 'https://portcullis.invalid/k8s-schemas/';

/** A kind's key in the vendored schemas' $defs (test/fixtures/k8s-schemas/vendor.ts writes them so). */
const kindKey = (apiVersion: string, kind: string) => `${apiVersion.replace('/', '.')}.${kind}`;

/**
 * Checks objects against the vendored schemas: Kubernetes' own kinds (kubernetes-validate's strict schemas) and the
 * CRDs the examples use (their openAPIV3Schema, unknown fields refused). Offline: nothing is fetched. The CRDs' CEL
 * rules (x-kubernetes-validations) are not evaluated: only the API server can.
 */
export function kubernetesValidator(): (object: KubernetesObject) => string[] {
  // x-kubernetes-* and OpenAPI's `nullable` are annotations to this validator; formats such as int32 are Kubernetes'
  // own, whose ranges the schemas state as minimum and maximum.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const kinds = new Map<string, string>();
  for (const file of readdirSync(schemaDir).filter((name) => name.endsWith('.json'))) {
    const schema = JSON.parse(readFileSync(path.join(schemaDir, file), 'utf8')) as { $defs: object };
    ajv.addSchema(schema);
    for (const key of Object.keys(schema.$defs)) kinds.set(key, `${schemaBaseId}${file}#/$defs/${key}`);
  }
  return (object) => {
    const key = kindKey(String(object.apiVersion), String(object.kind));
    const ref = kinds.get(key);
    if (!ref)
      return [
        `no schema for ${object.apiVersion} ${object.kind}: add it to test/fixtures/k8s-schemas/vendor.ts and run it`,
      ];
    const validate = ajv.getSchema(ref)!;
    if (validate(object)) return [];
    return (validate.errors ?? []).map(describeError);
  };
}

function describeError(error: ErrorObject): string {
  const where = error.instancePath || '/';
  if (error.keyword === 'additionalProperties')
    return `${where}: unknown field "${(error.params as { additionalProperty: string }).additionalProperty}"`;
  if (error.keyword === 'enum')
    return `${where}: ${error.message} (${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')})`;
  return `${where}: ${error.message}`;
}

/** Every object of every .yaml file in a folder (not a Kustomization: see renderKustomization). */
export function manifestsIn(dir: string): Manifest[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .flatMap((name) => objectsOf(path.join(dir, name)));
}

function objectsOf(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((document) => {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]!.message}`);
    return { file, object: document.toJS() as KubernetesObject };
  });
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  labels?: Array<{ pairs: Record<string, string>; includeSelectors?: boolean }>;
  resources?: string[];
  configMapGenerator?: Array<{ name: string; files: string[] }>;
}

/** What renderKustomization understands; any other field fails the test rather than being ignored. */
const kustomizationFields = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'labels',
  'resources',
  'configMapGenerator',
]);

/**
 * The objects `kubectl apply -k dir` would create, rendered here without the kustomize binary (the tests run
 * offline, on machines without it), for the subset of Kustomize the example uses: namespace, labels (not on
 * selectors), resource files, ConfigMaps generated from files. Generated names keep no hash suffix.
 */
export function renderKustomization(dir: string): Manifest[] {
  const file = path.join(dir, 'kustomization.yaml');
  const kustomization = objectsOf(file)[0]!.object as unknown as Kustomization;
  const unknown = Object.keys(kustomization).filter((field) => !kustomizationFields.has(field));
  if (unknown.length > 0)
    throw new Error(`${file}: fields this renderer does not know: ${unknown.join(', ')}`);
  if (
    kustomization.apiVersion !== 'kustomize.config.k8s.io/v1beta1' ||
    kustomization.kind !== 'Kustomization'
  )
    throw new Error(`${file}: not a kustomize.config.k8s.io/v1beta1 Kustomization`);
  const manifests = [
    ...(kustomization.resources ?? []).flatMap((resource) => objectsOf(path.join(dir, resource))),
    ...(kustomization.configMapGenerator ?? []).map((generator) => ({
      file,
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: generator.name },
        data: Object.fromEntries(
          generator.files.map((name) => [path.basename(name), readFileSync(path.join(dir, name), 'utf8')]),
        ),
      } as KubernetesObject,
    })),
  ];
  for (const { object } of manifests) {
    if (kustomization.namespace && object.kind !== 'Namespace')
      object.metadata.namespace = kustomization.namespace;
    for (const { pairs, includeSelectors } of kustomization.labels ?? []) {
      if (includeSelectors) throw new Error(`${file}: labels with includeSelectors are not rendered here`);
      object.metadata.labels = { ...object.metadata.labels, ...pairs };
    }
  }
  return manifests;
}
