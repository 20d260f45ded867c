import { createRequire } from 'node:module';
/**
 * xsl-transform: applies an XSLT 1.0 stylesheet to the XML body of the request (inbound) or the response
 * (outbound), with `<parameter>` values (expressions allowed) bound to the stylesheet's top-level `xsl:param`s.
 * https://learn.microsoft.com/azure/api-management/xsl-transform-policy
 *
 * The stylesheet is xslt-processor's (pure JavaScript XSLT 1.0), parsed once at load. It may reach nothing outside
 * the policy: `xsl:include` and `xsl:import` are refused at load, `document()` has no loader (it returns an empty
 * node-set), the processor is given a fetch function that refuses, and a body with a document type declaration
 * (where entities live) is refused before the processor sees it.
 */
import { SaxesParser } from 'saxes';
import type * as XsltProcessor from 'xslt-processor';
import type { Xslt } from 'xslt-processor';
import { defineElement } from '../element.js';
import { bodyText, messageOf, replaceBody } from '../message.js';
import { type Flow, PolicyError } from '../runtime.js';
import { elements, GPAO, str, text } from '../schema.js';
import type { XmlElement, XmlNode } from '../xml.js';

const require = createRequire(import.meta.url);
let processor: typeof XsltProcessor | undefined;
/**
 * xslt-processor, loaded when a policy first uses xsl-transform, not at every engine's start (6 MB that few
 * configurations use), and never bundled into dist/: it is LGPL-3.0, so it stays a replaceable package in node_modules.
 */
const xsltProcessor = () => (processor ??= require('xslt-processor') as typeof XsltProcessor);

const STYLESHEET_NAMES = ['xsl:stylesheet', 'xsl:transform'] as const;
const XSLT_NAMESPACE = 'http://www.w3.org/1999/XSL/Transform';

const escapeText = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (s: string): string => escapeText(s).replace(/"/g, '&quot;');

/** The stylesheet as XML text again, from the loader's tree (attribute values and text decoded there). */
export function serializeXml(node: XmlNode): string {
  if (node.kind === 'text') return escapeText(node.value);
  const attributes = node.attributes.map((a) => ` ${a.name}="${escapeAttribute(a.value)}"`).join('');
  if (node.children.length === 0) return `<${node.name}${attributes}/>`;
  return `<${node.name}${attributes}>${node.children.map(serializeXml).join('')}</${node.name}>`;
}

/** Why a stylesheet cannot be used, or undefined: not XSLT, or reaching for documents outside the policy. */
function stylesheetProblem(xml: XmlElement): string | undefined {
  const prefix = xml.name.slice(0, xml.name.indexOf(':'));
  const ns = xml.attributes.find((a) => a.name === `xmlns:${prefix}`)?.value;
  if (ns !== XSLT_NAMESPACE) return `<${xml.name}> must declare xmlns:${prefix}="${XSLT_NAMESPACE}"`;
  const reaching = (n: XmlNode): string | undefined => {
    if (n.kind === 'text') return undefined;
    if (n.name === `${prefix}:include` || n.name === `${prefix}:import`) return n.name;
    for (const c of n.children) {
      const found = reaching(c);
      if (found) return found;
    }
    return undefined;
  };
  const found = reaching(xml);
  if (found) return `<${found}> is not allowed: a stylesheet may not load other documents`;
  return undefined;
}

/** Refuses what saxes refuses (malformed XML) and any DOCTYPE, before the processor's own parser runs. */
function checkBody(xml: string): string | undefined {
  const parser = new SaxesParser();
  let problem: string | undefined;
  parser.on('doctype', () => {
    problem ??= 'a document type declaration is not allowed in the body';
  });
  parser.on('error', (e) => {
    problem ??= `the body is not well-formed XML: ${e.message}`;
  });
  try {
    parser.write(xml).close();
  } catch (e) {
    problem ??= `the body is not well-formed XML: ${(e as Error).message}`;
  }
  return problem;
}

const refuseFetch = async (uri: string): Promise<string> => {
  throw new Error(`xsl-transform loads no documents (asked for ${uri})`);
};

/**
 * The processor writes warnings (ambiguous template matches) and `xsl:message` text to the console; text a
 * stylesheet computes from a body must not reach the gateway's log. Messages are dropped, as .NET's
 * XslCompiledTransform drops them without a listener; `terminate="yes"` still stops the transformation.
 */
function quiet(xslt: Xslt): Xslt {
  xslt.warningsCallback = () => {};
  const withMessage = xslt as unknown as { xsltMessage(context: unknown, template: unknown): Promise<void> };
  withMessage.xsltMessage = async (_context, template) => {
    const terminate = (template as { getAttributeValue(n: string): unknown }).getAttributeValue('terminate');
    if (terminate === 'yes') throw new Error('xsl:message terminated the transformation');
  };
  return xslt;
}

export const xslTransform = defineElement({
  name: 'xsl-transform',
  summary: 'Applies an XSLT 1.0 stylesheet, with parameters, to the XML body.',
  sections: ['inbound', 'outbound'],
  scopes: GPAO,
  attributes: {},
  content: elements(
    {
      name: 'parameter',
      // The page's statement names the attribute parameter-name, its example name: both are accepted.
      attributes: { name: str({ expression: false }), 'parameter-name': str({ expression: false }) },
      content: text(true),
    },
    { name: 'xsl:stylesheet', min: 0, max: 1, content: { kind: 'any' } },
    { name: 'xsl:transform', min: 0, max: 1, content: { kind: 'any' } },
  ),
  body: 'read-write',
  compile(node, c) {
    const sheets = STYLESHEET_NAMES.flatMap((name) => node.childrenNamed(name));
    if (sheets.length !== 1) {
      c.error(node, 'children', `<xsl-transform> needs one <xsl:stylesheet>, got ${sheets.length}`);
      return (): Flow => 'next';
    }
    const sheet = sheets[0]!;
    const problem = stylesheetProblem(sheet.xml);
    if (problem) {
      c.error(sheet, 'children', problem);
      return (): Flow => 'next';
    }
    const parameters = node.childrenNamed('parameter').flatMap((p) => {
      const name = p.literal('name') ?? p.literal('parameter-name');
      if (name === undefined || (p.has('name') && p.has('parameter-name'))) {
        c.error(p, 'attribute', '<parameter> needs its name in one attribute: name (or parameter-name)');
        return [];
      }
      const value = p.text() ?? (() => '');
      return [{ name: String(name), value }];
    });
    const parser = new (xsltProcessor().XmlParser)();
    const stylesheetText = serializeXml(sheet.xml);
    try {
      parser.xmlParse(stylesheetText);
    } catch (e) {
      c.error(sheet, 'children', `the stylesheet cannot be read: ${(e as Error).message}`);
      return (): Flow => 'next';
    }
    const target = c.target;
    return async (run): Promise<Flow> => {
      const message = messageOf(run, target);
      if (message.body === null) return 'next';
      const input = bodyText(message);
      const refused = checkBody(input);
      if (refused) throw new PolicyError('XslTransformFailed', refused, 500, 'Internal server error');
      const xslt = quiet(
        new (xsltProcessor().Xslt)({
          parameters: parameters.map((p) => ({ name: p.name, value: p.value(run) })),
          fetchFunction: refuseFetch,
          // The README calls escaping the default, but without it text nodes are written unescaped (`a & b`).
          escape: true,
        }),
      );
      let output: string;
      try {
        // The stylesheet is parsed per run: the processor's documents are mutable and not shared between runs.
        output = await xslt.xsltProcess(parser.xmlParse(input), parser.xmlParse(stylesheetText));
      } catch (e) {
        throw new PolicyError(
          'XslTransformFailed',
          `the transformation failed: ${(e as Error).message}`,
          500,
          'Internal server error',
        );
      }
      replaceBody(run, target, output);
      return 'next';
    };
  },
});
