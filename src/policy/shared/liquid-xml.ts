/**
 * What a Liquid template sees as `body` when the message is XML. The set-body page says only that an XML body
 * binds when Content-Type is application/xml, text/xml or any type ending in +xml, and that `xsi-nil` decides
 * whether an element marked xsi:nil="true" is blank or null
 * (https://learn.microsoft.com/azure/api-management/set-body-policy#using-liquid-templates-with-set-body). The
 * shape is Portcullis's (docs/differences.md): elements and attributes by local name (namespace prefixes
 * dropped, so `{{body.Envelope.Body.GetOrder.id}}` reads a SOAP body), an element with neither child elements
 * nor attributes is its text, a repeated element is an array, and other text is `#text`.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';

export const XML_TYPE = /^(application|text)\/([\w.+-]*\+)?xml\b/i;

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const XMLNS = 'http://www.w3.org/2000/xmlns/';

interface Building {
  readonly fields: Map<string, unknown[]>;
  text: string;
  nil: boolean;
}

function finish(b: Building, nil: 'blank' | 'null'): unknown {
  if (b.nil) return nil === 'null' ? null : '';
  if (b.fields.size === 0) return b.text;
  const out: Record<string, unknown> = {};
  for (const [name, values] of b.fields) out[name] = values.length === 1 ? values[0] : values;
  if (b.text.trim() !== '') out['#text'] = b.text;
  return out;
}

/** The body as Liquid data, or undefined when it is not well-formed XML or declares a DOCTYPE (never expanded). */
export function xmlForLiquid(xml: string, nil: 'blank' | 'null'): Record<string, unknown> | undefined {
  const parser = new SaxesParser({ xmlns: true });
  const stack: Building[] = [{ fields: new Map(), text: '', nil: false }];
  let refused = false;
  parser.on('doctype', () => {
    refused = true;
  });
  parser.on('error', () => {
    refused = true;
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    const b: Building = { fields: new Map(), text: '', nil: false };
    for (const a of Object.values(tag.attributes)) {
      if (a.uri === XMLNS || a.name === 'xmlns') continue;
      if (a.uri === XSI) {
        if (a.local === 'nil' && a.value.trim() === 'true') b.nil = true;
        continue;
      }
      b.fields.set(a.local, [a.value]);
    }
    stack.push(b);
  });
  parser.on('closetag', (tag: SaxesTagNS) => {
    const b = stack.pop()!;
    const parent = stack[stack.length - 1]!;
    const list = parent.fields.get(tag.local) ?? [];
    list.push(finish(b, nil));
    parent.fields.set(tag.local, list);
  });
  const addText = (t: string): void => {
    stack[stack.length - 1]!.text += t;
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  try {
    parser.write(xml).close();
  } catch {
    return undefined;
  }
  if (refused) return undefined;
  const root = finish(stack[0]!, nil);
  return typeof root === 'object' && root !== null ? (root as Record<string, unknown>) : undefined;
}
