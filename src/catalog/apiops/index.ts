/**
 * APIOps artifacts ⇄ gateway configuration: `portcullis import apiops` and `export apiops`. Each kind of API
 * Management resource is one file of `resources/`, listed in `resources/index.ts`.
 */
import { ApiopsError, ArtifactFolder } from './artifacts.js';
import type { ExportContext, ImportContext } from './context.js';
import { emptyDocument, type Finding, type GatewayDocument } from './model.js';
import { resourceKinds } from './resources/index.js';

export { ApiopsError } from './artifacts.js';
export type { Finding, GatewayDocument } from './model.js';
export { gatewaySections } from './model.js';
export { type FolderPlan, mergeOverrides, type OverrideEntry, planOverFolder } from './over-folder.js';

export interface ApiopsImport {
  readonly document: GatewayDocument;
  /** Policy documents and definitions to write beside the configuration: relative path → text. */
  readonly files: ReadonlyMap<string, string>;
  readonly findings: readonly Finding[];
}

/**
 * Reads an extracted instance (`directory`), with an environment's overrides (`configuration.<env>.yaml`) laid
 * over it. Throws ApiopsError when the folder or a file cannot be read at all, or holds what an artifact folder may
 * not (links, oversized files, references out of it, alias bombs); everything else that does not map is a finding.
 */
export async function importApiops(
  directory: string,
  options: { overrides?: string } = {},
): Promise<ApiopsImport> {
  const artifacts = new ArtifactFolder(directory, options.overrides);
  const context: ImportContext = {
    artifacts,
    document: emptyDocument(),
    output: new Map(),
    apiIds: new Map(),
  };
  for (const kind of resourceKinds) await kind.importInto(context);
  if (artifacts.refused.length > 0) throw new ApiopsError(artifacts.refused);
  if (options.overrides !== undefined) artifacts.unusedOverrides(options.overrides);
  return { document: context.document, files: context.output, findings: artifacts.findings };
}

export interface ApiopsExport {
  /** The artifact folder's files: relative path → text. */
  readonly files: ReadonlyMap<string, string>;
  /** Secret named values and subscription keys, as the sections of an overrides file (empty when there are none). */
  readonly secrets: ReadonlyMap<string, readonly { name: string; properties: Record<string, unknown> }[]>;
  readonly findings: readonly Finding[];
}

/** Writes a configuration's APIs, products, … as APIOps artifacts (in memory; the caller writes the files). */
export function exportApiops(
  config: GatewayDocument,
  read: { policyText(source: string): string; fileText(relative: string): string },
): ApiopsExport {
  const context: ExportContext = {
    config,
    policyText: read.policyText,
    fileText: read.fileText,
    output: new Map(),
    secrets: new Map(),
    findings: [],
  };
  for (const kind of resourceKinds) kind.exportFrom(context);
  return { files: context.output, secrets: context.secrets, findings: context.findings };
}
