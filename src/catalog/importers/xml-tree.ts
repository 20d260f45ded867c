/**
 * A namespace-aware element tree with positions, for the XML definition formats (WADL, WSDL). saxes parses;
 * a DOCTYPE is refused outright, so no entity expansion or external entity can happen.
 */
import { readFile } from 'node:fs/promises';
import { SaxesParser } from 'saxes';
import { ImportError, type XmlName } from './model.js';

export interface XmlElement {
  /** Namespace URI ('' when none). */
  readonly namespace: string;
  readonly localName: string;
  /** Attributes without a prefix by local name; prefixed ones by `{uri}local`. */
  readonly attributes: ReadonlyMap<string, string>;
  /** Namespace bindings in scope (prefix → URI, '' for the default namespace), for QName attribute values. */
  readonly scope: ReadonlyMap<string, string>;
  readonly children: readonly XmlElement[];
  /** Text content directly inside the element (CDATA included), untrimmed. */
  readonly text: string;
  readonly line: number;
  readonly column: number;
  /** `resources/resource[2]/method[1]`-style path from the root, for messages. */
  readonly path: string;
}

interface Building {
  namespace: string;
  localName: string;
  attributes: Map<string, string>;
  scope: Map<string, string>;
  children: XmlElement[];
  text: string;
  line: number;
  column: number;
  path: string;
  counts: Map<string, number>;
}

/** Reads and parses `file`; any problem is an ImportError at its line and column. */
export async function readXml(file: string): Promise<XmlElement> {
  return parseXml(await readXmlText(file), file);
}

/** The text of `file`, for an importer that reads more of it than the tree (WSDL's schemas); ImportError if unread. */
export async function readXmlText(file: string): Promise<string> {
  return readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new ImportError([{ file, message: `cannot read the file (${error.code ?? error.message})` }]);
  });
}

export function parseXml(text: string, file: string): XmlElement {
  const lineStarts = [0];
  for (let index = text.indexOf('\n'); index >= 0; index = text.indexOf('\n', index + 1)) {
    lineStarts.push(index + 1);
  }
  const positionOf = (offset: number): { line: number; column: number } => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - lineStarts[low]! + 1 };
  };

  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: Building[] = [];
  let root: XmlElement | undefined;
  let failure: ImportError | undefined;
  const fail = (offset: number, message: string): void => {
    failure ??= new ImportError([{ file, ...positionOf(Math.max(0, offset)), message }]);
  };

  let lastClosed: Building | undefined;
  parser.on('error', (error) => {
    // saxes prefixes "line:col: "; our own position replaces it.
    const message = error.message.replace(/^(?:[^:\n]*:)?\d+:\d+: /, '');
    // saxes says only "unexpected close tag." for `</b>` where `<a>` is open, after closing `<a>` (the closetag just
    // handled): name both, and where `<a>` opened, where the tag that was never closed is.
    if (message.startsWith('unexpected close tag') && lastClosed) {
      const closeAt = text.lastIndexOf('</', parser.position - 1);
      const closing = /^<\/([^\s>]*)/.exec(text.slice(closeAt))?.[1] ?? '';
      fail(
        closeAt,
        `</${closing}> does not close <${lastClosed.localName}>, which is open since ${lastClosed.line}:${lastClosed.column}`,
      );
      return;
    }
    fail(parser.position - 1, message);
  });
  parser.on('doctype', () => {
    fail(text.lastIndexOf('<!DOCTYPE', parser.position), 'a DOCTYPE is not allowed (no DTDs or entities)');
  });
  let tagOffset = 0;
  parser.on('opentagstart', () => {
    tagOffset = text.lastIndexOf('<', parser.position - 1);
  });
  parser.on('opentag', (tag) => {
    const parent = stack[stack.length - 1];
    const scope = new Map(parent?.scope ?? [['xml', 'http://www.w3.org/XML/1998/namespace']]);
    for (const [prefix, uri] of Object.entries(tag.ns ?? {})) scope.set(prefix, uri);
    const attributes = new Map<string, string>();
    for (const attribute of Object.values(tag.attributes)) {
      if (attribute.prefix === 'xmlns' || attribute.name === 'xmlns') continue;
      attributes.set(
        attribute.uri ? `{${attribute.uri}}${attribute.local}` : attribute.local,
        attribute.value,
      );
    }
    const index = (parent?.counts.get(tag.local) ?? 0) + 1;
    parent?.counts.set(tag.local, index);
    stack.push({
      namespace: tag.uri ?? '',
      localName: tag.local ?? tag.name,
      attributes,
      scope,
      children: [],
      text: '',
      ...positionOf(tagOffset),
      path: parent ? `${parent.path}/${tag.local}[${index}]` : (tag.local ?? tag.name),
      counts: new Map(),
    });
  });
  parser.on('closetag', () => {
    const building = stack.pop()!;
    lastClosed = building;
    const { counts: _counts, ...element } = building;
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(element);
    else root = element;
  });
  const addText = (value: string): void => {
    const current = stack[stack.length - 1];
    if (current) current.text += value;
  };
  parser.on('text', addText);
  parser.on('cdata', addText);

  try {
    parser.write(text).close();
  } catch (error) {
    // saxes throws when the error handler lets it continue into an impossible state; the first one counts.
    if (!failure) throw error;
  }
  if (failure) throw failure;
  if (!root)
    throw new ImportError([{ file, line: 1, column: 1, message: 'the document has no root element' }]);
  return root;
}

export function children(
  element: XmlElement,
  namespaces: readonly string[],
  localName: string,
): XmlElement[] {
  return element.children.filter(
    (child) => child.localName === localName && namespaces.includes(child.namespace),
  );
}

export function child(
  element: XmlElement,
  namespaces: readonly string[],
  localName: string,
): XmlElement | undefined {
  return element.children.find((item) => item.localName === localName && namespaces.includes(item.namespace));
}

/** Resolves a QName attribute value (`tns:GetPrice`) with the namespaces in scope at `element`. */
export function resolveQName(element: XmlElement, value: string): XmlName | undefined {
  const colon = value.indexOf(':');
  const prefix = colon < 0 ? '' : value.slice(0, colon);
  const localName = colon < 0 ? value : value.slice(colon + 1);
  const namespace = element.scope.get(prefix);
  if (namespace === undefined) return prefix === '' ? { namespace: '', localName } : undefined;
  return { namespace, localName };
}

/** The trimmed text of an element's `documentation`/`doc` children, joined; undefined when empty. */
export function documentation(
  element: XmlElement,
  namespaces: readonly string[],
  localName: string,
): string | undefined {
  const text = children(element, namespaces, localName)
    .map((doc) => doc.text.replace(/\s+/g, ' ').trim())
    .filter((value) => value !== '')
    .join('\n');
  return text === '' ? undefined : text;
}
