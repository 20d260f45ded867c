import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  type Stats,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import { type Diagnostic, DiagnosticsError } from '../../diagnostic.js';
import { YamlAliasError, yamlData } from '../../yaml-data.js';
import type { Finding } from './model.js';

/**
 * The largest file an artifact folder (or an overrides file) may hold: four times the largest definition API
 * Management takes inline (4 MB; larger ones come from a URL), so a real specification fits and a 300 MB one is
 * refused before it is read, instead of exhausting the heap.
 */
export const maxArtifactBytes = 16 * 1024 * 1024;

/** The artifacts cannot be read at all (a missing folder, malformed JSON or YAML): nothing is imported. */
export class ApiopsError extends DiagnosticsError {
  override readonly name = 'ApiopsError';
}

type Properties = Record<string, unknown>;

/** One override of `configuration.<env>.yaml`: `{ name, properties, <child section>: [...] }`. */
interface Override {
  readonly name: string;
  readonly properties: Properties;
  readonly children: Map<string, Override[]>;
  used: boolean;
  readonly where: string;
}

export const isRecord = (value: unknown): value is Properties =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * An extracted API Management instance on disk, with the environment's overrides laid over it the way the APIOps
 * publisher does (each resource's `properties` merged key by key). Every read goes through here, so the findings
 * name the artifact file a value came from.
 */
export class ArtifactFolder {
  readonly findings: Finding[] = [];
  /** What the folder may not hold (a specification's reference out of it, an alias bomb): the import stops. */
  readonly refused: Diagnostic[] = [];
  private readonly overrides: Map<string, Override[]>;

  constructor(
    readonly root: string,
    overridesFile?: string,
  ) {
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      throw new ApiopsError([{ file: root, message: 'not a folder of APIOps artifacts' }]);
    }
    const problems = untrustedEntries(root);
    if (problems.length > 0) throw new ApiopsError(problems);
    this.overrides = overridesFile
      ? readOverrides(overridesFile, (message) => this.skip(overridesFile, message))
      : new Map();
  }

  /** The first of `names` (the extractor's spelling and the APIOps CLI's: `named values`, `namedValues`) present. */
  folder(names: readonly string[]): string | undefined {
    return names.find((name) => existsSync(path.join(this.root, name)));
  }

  /** The sub-folders of `relative`, sorted, so the result does not depend on the file system's order. */
  children(relative: string): string[] {
    const full = path.join(this.root, relative);
    if (!existsSync(full)) return [];
    return readdirSync(full, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  }

  files(relative: string): string[] {
    const full = path.join(this.root, relative);
    if (!existsSync(full)) return [];
    return readdirSync(full, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name)
      .sort();
  }

  exists(relative: string): boolean {
    return existsSync(path.join(this.root, relative));
  }

  text(relative: string): string | undefined {
    const full = path.join(this.root, relative);
    return existsSync(full) ? readFileSync(full, 'utf8') : undefined;
  }

  absolute(relative: string): string {
    return path.join(this.root, relative);
  }

  /** The JSON document at `relative`, or undefined when absent; malformed JSON stops the import, naming the file. */
  json(relative: string): unknown {
    const text = this.text(relative);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (error) {
      throw new ApiopsError([
        { file: this.absolute(relative), message: `not JSON: ${(error as Error).message}` },
      ]);
    }
  }

  /**
   * `properties` of an information file, with the override of `section`/`name` (nested under `parent` for an API's
   * operations) merged over it.
   */
  properties(
    relative: string,
    section: string,
    name: string,
    parent?: { section: string; name: string },
  ): Properties {
    const document = this.json(relative);
    const own = isRecord(document) && isRecord(document.properties) ? document.properties : {};
    const override = this.override(section, name, parent);
    return override ? merge(own, override.properties) : own;
  }

  /** An override for a resource the artifacts do not have (the publisher would create it from the override alone). */
  private override(
    section: string,
    name: string,
    parent?: { section: string; name: string },
  ): Override | undefined {
    const list = parent
      ? this.overrides
          .get(parent.section)
          ?.find((entry) => entry.name === parent.name)
          ?.children.get(section)
      : this.overrides.get(section);
    const found = list?.find((entry) => entry.name === name);
    if (found) found.used = true;
    return found;
  }

  skip(file: string, message: string): void {
    this.findings.push({ file, message, kind: 'skipped' });
  }

  changed(file: string, message: string): void {
    this.findings.push({ file, message, kind: 'changed' });
  }

  todo(file: string, message: string): void {
    this.findings.push({ file, message, kind: 'todo' });
  }

  /** Overrides that named no artifact, or sections Portcullis has nothing for: listed, never silently ignored. */
  unusedOverrides(overridesFile: string): void {
    for (const [section, entries] of this.overrides) {
      for (const entry of entries) {
        if (!entry.used) {
          this.skip(
            overridesFile,
            `${entry.where}: override of ${section} "${entry.name}" matches no artifact it maps to`,
          );
        }
      }
    }
  }
}

/**
 * An artifact folder comes from a pull request or an archive: before anything in it is read, every entry must be a
 * folder or a regular file of at most maxArtifactBytes. A symbolic link is refused wherever it points — to
 * /etc/passwd, to ../outside, even to a sibling — since the folder must be what it looks like; so are pipes
 * (reading one waits forever), sockets and devices. Every such entry is named, in path order.
 */
function untrustedEntries(root: string): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const folder = pending.pop()!;
    for (const name of readdirSync(folder)) {
      const file = path.join(folder, name);
      const stats = lstatSync(file);
      if (stats.isSymbolicLink()) {
        problems.push({
          file,
          message: `a symbolic link (to ${readlinkSync(file)}): an artifact folder is read as it is, so links are refused wherever they point`,
        });
      } else if (stats.isDirectory()) {
        pending.push(file);
      } else if (!stats.isFile()) {
        problems.push({ file, message: `${specialKind(stats)}, not a file or folder` });
      } else if (stats.size > maxArtifactBytes) {
        problems.push({ file, message: tooLarge(stats.size) });
      }
    }
  }
  return problems.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

function specialKind(stats: Stats): string {
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isSocket()) return 'a socket';
  return 'a device';
}

const tooLarge = (size: number) =>
  `${size} bytes, more than the ${maxArtifactBytes} bytes an artifact file may have`;

/** Objects merged key by key (the override wins); anything else is replaced. */
function merge(base: Properties, over: Properties): Properties {
  const out: Properties = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = isRecord(value) && isRecord(out[key]) ? merge(out[key] as Properties, value) : value;
  }
  return out;
}

/** `configuration.<env>.yaml`: sections of `{ name, properties }` entries, APIs with nested operation sections. */
function readOverrides(file: string, unusable: (message: string) => void): Map<string, Override[]> {
  if (!existsSync(file))
    throw new ApiopsError([{ file, message: 'cannot read the overrides file (ENOENT)' }]);
  // Bounded as the artifacts are: the overrides file usually sits in the same repository.
  const size = statSync(file).size;
  if (size > maxArtifactBytes) throw new ApiopsError([{ file, message: tooLarge(size) }]);
  const text = readFileSync(file, 'utf8');
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const problems: Diagnostic[] = document.errors.map((error) => {
    const position = lineCounter.linePos(error.pos[0]);
    return { file, line: position.line, column: position.col, message: error.message.split('\n')[0]! };
  });
  if (problems.length > 0) throw new ApiopsError(problems);
  // Values come from the document's data, aliases expanded within the bound; the nodes only say where.
  let data: unknown;
  try {
    data = yamlData(document);
  } catch (error) {
    if (!(error instanceof YamlAliasError)) throw error;
    throw new ApiopsError([{ file, line: 1, column: 1, message: error.message }]);
  }
  const sections = new Map<string, Override[]>();
  if (!isMap(document.contents) || !isRecord(data)) return sections;
  const where = (node: { range?: [number, number, number] | null | undefined }) => {
    const position = lineCounter.linePos(node.range?.[0] ?? 0);
    return `${position.line}:${position.col}`;
  };
  const entriesOf = (node: unknown, values: unknown, at: string): Override[] => {
    if (!isSeq(node) || !Array.isArray(values)) return [];
    return node.items.flatMap((item, index) => {
      const value: unknown = values[index];
      if (!isRecord(value) || typeof value.name !== 'string') {
        // The publisher's sample keeps placeholders (`name: [your name here]`) until an operator fills them.
        unusable(`${at} line ${where(item as never).split(':')[0]}: an override without a name is ignored`);
        return [];
      }
      const children = new Map<string, Override[]>();
      if (isMap(item)) {
        for (const pair of item.items) {
          const key = String((pair.key as { value?: unknown }).value ?? pair.key);
          if (key !== 'name' && key !== 'properties')
            children.set(key, entriesOf(pair.value, value[key], `${at}.${key}`));
        }
      }
      return [
        {
          name: value.name,
          properties: isRecord(value.properties) ? value.properties : {},
          children,
          used: false,
          where: `line ${where(item as never).split(':')[0]}`,
        },
      ];
    });
  };
  for (const pair of document.contents.items) {
    const key = String((pair.key as { value?: unknown }).value ?? pair.key);
    if (key === 'apimServiceName') continue;
    sections.set(key, entriesOf(pair.value, data[key], key));
  }
  return sections;
}

/**
 * Reports each property of an information file that was not carried over, with the reason (`reasons`), or a
 * generic one. Empty values (`{}`, `[]`, `""`, null) and `used` ones are not findings.
 */
export function reportUnused(
  artifacts: ArtifactFolder,
  file: string,
  properties: Properties,
  used: readonly string[],
  reasons: Readonly<Record<string, string>> = {},
): void {
  for (const [key, value] of Object.entries(properties)) {
    if (used.includes(key) || isEmpty(value)) continue;
    artifacts.skip(file, `${key}: ${reasons[key] ?? 'not supported by Portcullis'}`);
  }
}

function isEmpty(value: unknown): boolean {
  return (
    value === null ||
    value === false ||
    value === undefined ||
    value === '' ||
    (Array.isArray(value) && value.length === 0) ||
    (isRecord(value) && Object.keys(value).length === 0)
  );
}

/** `name` when the configuration's ids allow it, else a slug of it (a finding says so). */
export function configId(
  artifacts: ArtifactFolder,
  file: string,
  name: string,
  pattern = /^[A-Za-z0-9_-]+$/,
): string {
  if (pattern.test(name)) return name;
  const id =
    name
      .normalize('NFKD')
      .replace(/[^A-Za-z0-9_-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'resource';
  artifacts.changed(file, `name "${name}" is not a Portcullis id: used "${id}" instead`);
  return id;
}
