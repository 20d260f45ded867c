import { createHash } from 'node:crypto';
import path from 'node:path';
import {
  type Document,
  isMap,
  isNode,
  isScalar,
  isSeq,
  type Node,
  parseDocument,
  Scalar,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { formatPath } from '../config/load.js';
import { isInlinePolicy } from '../config/policy-source.js';
import type { FileTexts } from '../config/snapshot.js';
import { ManagementError } from './errors.js';
import { keepUntouchedLines } from './untouched-lines.js';

const renderOptions = { lineWidth: 0 } as const;

/** A key path into the configuration, e.g. `['apis', 2, 'operations']`. */
export type ConfigPath = readonly (string | number)[];

/**
 * The gateway configuration file as an editable YAML document: the management API changes exactly the nodes a
 * request is about, so the operator's comments, order and layout elsewhere in the file stay as they were. Policy
 * documents kept in their own files are edited in those files.
 */
export class ConfigDocument {
  private document: Document;
  /** The text of a replaced configuration, kept exactly as given. */
  private verbatim: string | undefined;
  /**
   * Whether the configuration itself changed. Rendering an unchanged document is not a no-op (the YAML library
   * writes some things its own way), so a change to a policy file alone leaves the configuration file untouched.
   */
  private changed = false;
  /** Policy files to write with the configuration, by absolute path. */
  private readonly policyFiles = new Map<string, string>();

  constructor(
    private readonly file: string,
    private readonly texts: FileTexts,
  ) {
    this.document = parseDocument(texts.get(file) ?? '', { uniqueKeys: true });
    if (!isMap(this.document.contents)) this.document.contents = this.document.createNode({}) as never;
  }

  /** The value at a path as plain data, or undefined. */
  get(at: ConfigPath): unknown {
    const node = this.document.getIn(at, true);
    return isNode(node) ? node.toJSON() : node;
  }

  /** The entries of a list of objects (`apis`, `apis[0].operations`…): plain data, in file order. */
  list(at: ConfigPath): Record<string, unknown>[] {
    const node = this.document.getIn(at, true);
    if (node === undefined || node === null) return [];
    if (!isSeq(node))
      throw new ManagementError(500, 'InvalidConfiguration', `${formatPath(at)} is not a list`);
    return (node.toJSON() as unknown[]).filter(isRecord);
  }

  /** The entries of a map (`namedValues`, `fragments`): key → plain data, in file order. */
  entries(at: ConfigPath): [string, unknown][] {
    const node = this.document.getIn(at, true);
    if (node === undefined || node === null) return [];
    if (!isMap(node))
      throw new ManagementError(500, 'InvalidConfiguration', `${formatPath(at)} is not a map`);
    return Object.entries(node.toJSON() as Record<string, unknown>);
  }

  /** Replaces (or adds, at the end) the list entry at `index`; the list is created when missing. */
  setListEntry(at: ConfigPath, index: number, value: unknown): void {
    this.edited();
    const list = this.ensureList(at);
    if (index < list.items.length) list.items[index] = this.update(list.items[index], value);
    else list.add(this.node(value));
  }

  deleteListEntry(at: ConfigPath, index: number): void {
    this.edited();
    this.ensureList(at).delete(index);
  }

  /** Sets a value (a map entry, a field), creating the maps on the way. */
  set(at: ConfigPath, value: unknown): void {
    this.edited();
    this.document.setIn(at, this.update(this.document.getIn(at, true), value));
  }

  delete(at: ConfigPath): void {
    this.edited();
    this.document.deleteIn(at);
  }

  /**
   * The XML of the policy at `at` (the `policy` field of a scope, or a fragment): inline, or read from the file it
   * names. Undefined when the scope has none.
   */
  policy(at: ConfigPath): string | undefined {
    const value = this.get(at);
    if (typeof value !== 'string') return undefined;
    if (isInlinePolicy(value)) return value;
    const file = this.resolve(value);
    return this.policyFiles.get(file) ?? this.texts.get(file);
  }

  /** Sets a policy: into its own file when the scope names one, otherwise inline in the configuration. */
  setPolicy(at: ConfigPath, xml: string): void {
    const value = this.get(at);
    if (typeof value === 'string' && !isInlinePolicy(value)) {
      this.policyFiles.set(this.resolve(value), xml);
      return;
    }
    this.edited();
    const node = new Scalar(xml);
    // A block scalar keeps the document readable (and exactly the text given, with `|`).
    node.type = Scalar.BLOCK_LITERAL;
    this.document.setIn(at, node);
  }

  /** Every policy document written inline, as the export shows them. */
  inlinePolicies(): void {
    for (const at of this.policyPlaces()) {
      const xml = this.policy(at);
      if (xml !== undefined) {
        this.edited();
        const node = new Scalar(xml);
        node.type = Scalar.BLOCK_LITERAL;
        this.document.setIn(at, node);
      }
    }
  }

  /**
   * Where a policy document may be, inline or as a file name: global, fragments, products, APIs, operations. Parts
   * of the wrong shape (an import not validated yet) hold none.
   */
  policyPlaces(): ConfigPath[] {
    const length = (at: ConfigPath) => {
      const value = this.get(at);
      return Array.isArray(value) ? value.length : 0;
    };
    const fragments = this.get(['fragments']);
    const places: ConfigPath[] = [['policy']];
    if (isRecord(fragments)) for (const id of Object.keys(fragments)) places.push(['fragments', id]);
    for (let index = 0; index < length(['products']); index++) places.push(['products', index, 'policy']);
    for (let index = 0; index < length(['apis']); index++) {
      places.push(['apis', index, 'policy']);
      for (let operation = 0; operation < length(['apis', index, 'operations']); operation++) {
        places.push(['apis', index, 'operations', operation, 'policy']);
      }
    }
    return places;
  }

  /** The policy files the configuration names (absolute paths), each with where it is named. */
  policyFileReferences(): { readonly at: ConfigPath; readonly file: string }[] {
    return this.policyPlaces().flatMap((at) => {
      const value = this.get(at);
      return typeof value === 'string' && !isInlinePolicy(value) ? [{ at, file: this.resolve(value) }] : [];
    });
  }

  /** Replaces the whole configuration with this text (an import). */
  replace(text: string): void {
    this.changed = true;
    this.verbatim = text;
    this.document = parseDocument(text, { uniqueKeys: true });
  }

  /** An independent copy, to look at the configuration another way without changing this one. */
  copy(): ConfigDocument {
    const copy = new ConfigDocument(this.file, this.texts);
    copy.replace(this.toString());
    for (const [file, text] of this.policyFiles) copy.policyFiles.set(file, text);
    return copy;
  }

  /** The files to write for this change: the configuration, and the policy files it edited. */
  changes(): Map<string, string> {
    return new Map([...(this.changed ? [[this.file, this.toString()] as const] : []), ...this.policyFiles]);
  }

  toString(): string {
    const original = this.texts.get(this.file) ?? '';
    if (!this.changed) return original;
    if (this.verbatim !== undefined) return this.verbatim;
    const rendered = this.document.toString(renderOptions);
    const before = parseDocument(original, { uniqueKeys: true });
    // A file the library cannot render as it was (errors in it) gains nothing from the comparison.
    if (before.errors.length > 0) return rendered;
    return keepUntouchedLines(original, before.toString(renderOptions), rendered);
  }

  toJSON(): unknown {
    return this.document.toJS();
  }

  /** An edit after a replacement: the document is the truth from now on. */
  private edited(): void {
    this.changed = true;
    this.verbatim = undefined;
  }

  private resolve(relative: string): string {
    return path.resolve(path.dirname(this.file), relative);
  }

  private ensureList(at: ConfigPath): YAMLSeq {
    let list = this.document.getIn(at, true);
    if (list === undefined || list === null || (isScalar(list) && list.value === null)) {
      this.document.setIn(at, this.document.createNode([]));
      list = this.document.getIn(at, true);
    }
    if (!isSeq(list))
      throw new ManagementError(500, 'InvalidConfiguration', `${formatPath(at)} is not a list`);
    // Entries the API adds are written in block style, one per line, whatever the list was written in.
    list.flow = false;
    return list;
  }

  private node(value: unknown) {
    const node = this.document.createNode(value);
    if (isMap(node)) blockPolicies(node);
    return node;
  }

  /**
   * `existing` changed in place to hold `value`: the keys, items and scalars that stay keep their comments, style
   * and layout, so a changed field is the only line that changes (a PATCH of one field, a product's API list).
   */
  private update(existing: unknown, value: unknown): unknown {
    if (isScalar(existing) && !isNode(value) && (value === null || typeof value !== 'object')) {
      if (existing.value !== value) {
        existing.value = value;
        // Policy XML reads best as a block scalar; a block scalar that became one line, as written by default.
        const multiline = typeof value === 'string' && value.includes('\n');
        if (multiline) existing.type = Scalar.BLOCK_LITERAL;
        else if (existing.type === Scalar.BLOCK_LITERAL || existing.type === Scalar.BLOCK_FOLDED)
          existing.type = undefined;
      }
      return existing;
    }
    if (isMap(existing) && isRecord(value)) {
      existing.items = existing.items.filter((pair) => {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        return typeof key === 'string' && Object.hasOwn(value, key);
      });
      for (const [key, item] of Object.entries(value)) {
        const pair = existing.items.find(
          (candidate) => isScalar(candidate.key) && candidate.key.value === key,
        );
        if (pair) pair.value = this.update(pair.value, item) as Node;
        else existing.set(key, this.node(item));
      }
      // A flow map `{ … }` cannot hold a block scalar.
      if (existing.flow && hasMultilineString(value)) existing.flow = false;
      return existing;
    }
    if (isSeq(existing) && Array.isArray(value)) {
      const items = existing.items;
      const byId = (item: unknown) => (isMap(item) ? item.get('id') : undefined);
      value.forEach((item, index) => {
        // Entries with ids (operations) are matched by id, so each keeps its own comments when others move.
        const id = isRecord(item) && typeof item.id === 'string' ? item.id : undefined;
        const match = id === undefined ? -1 : items.findIndex((candidate) => byId(candidate) === id);
        const from = match >= 0 && match >= index ? match : index;
        if (from !== index) items.splice(index, 0, ...items.splice(from, 1));
        items[index] = index < items.length ? (this.update(items[index], item) as Node) : this.node(item);
      });
      items.length = value.length;
      if (existing.flow && hasMultilineString(value)) existing.flow = false;
      return existing;
    }
    const node = this.node(value);
    if (isNode(existing)) {
      node.commentBefore = existing.commentBefore;
      node.comment = existing.comment;
      node.spaceBefore = existing.spaceBefore;
    }
    return node;
  }
}

function hasMultilineString(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\n');
  if (Array.isArray(value)) return value.some(hasMultilineString);
  return isRecord(value) && Object.values(value).some(hasMultilineString);
}

/** Multi-line policy XML inside an entry (an API's, an operation's) reads best as a block scalar. */
function blockPolicies(map: YAMLMap): void {
  for (const pair of map.items) {
    if (isScalar(pair.value) && typeof pair.value.value === 'string' && pair.value.value.includes('\n')) {
      pair.value.type = Scalar.BLOCK_LITERAL;
    } else if (isMap(pair.value)) blockPolicies(pair.value);
    else if (isSeq(pair.value)) for (const item of pair.value.items) if (isMap(item)) blockPolicies(item);
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A strong entity tag for a representation: changes whenever its content does (key order aside). */
export function entityTag(value: unknown): string {
  return `"${createHash('sha256').update(canonicalJson(value)).digest('base64url').slice(0, 27)}"`;
}

/** JSON with every object's keys sorted: the file's key order and a body's may differ for the same entry. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
