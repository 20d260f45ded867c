import type { ArtifactFolder } from './artifacts.js';
import type { Finding, GatewayDocument } from './model.js';

/** What the resource kinds share while an artifact folder becomes a configuration. */
export interface ImportContext {
  readonly artifacts: ArtifactFolder;
  readonly document: GatewayDocument;
  /** Files to write beside the configuration (policy documents, definitions): path relative to it → text. */
  readonly output: Map<string, string>;
  /** API Management API name → the gateway API id (APIs that could not be carried over are absent). */
  readonly apiIds: Map<string, string>;
}

/** What the resource kinds share while a configuration becomes an artifact folder. */
export interface ExportContext {
  readonly config: GatewayDocument;
  /** A policy as the configuration names it: a file beside the configuration, or the XML inline. */
  policyText(source: string): string;
  /** A file the configuration names (a definition), relative to it. */
  fileText(relative: string): string;
  /** Files of the artifact folder: path relative to it → text. */
  readonly output: Map<string, string>;
  /**
   * Secrets the artifacts must not hold (secret named values, subscription keys), as an overrides file's sections:
   * written only where the operator asks (`--secrets`), never into the artifact folder.
   */
  readonly secrets: Map<string, { name: string; properties: Record<string, unknown> }[]>;
  readonly findings: Finding[];
}

/**
 * One kind of API Management resource (named values, APIs, products, …): how its artifacts become configuration
 * and back. Each lives in its own file under `resources/` and is listed, in dependency order, in `resources/index.ts`.
 */
export interface ResourceKind {
  readonly name: string;
  importInto(context: ImportContext): Promise<void> | void;
  exportFrom(context: ExportContext): void;
}

/** `{ properties }` as the extractor writes an information file, two-space indented with a final newline. */
export function informationFile(properties: Record<string, unknown>): string {
  const defined = Object.fromEntries(Object.entries(properties).filter(([, value]) => value !== undefined));
  return `${JSON.stringify({ properties: defined }, null, 2)}\n`;
}
