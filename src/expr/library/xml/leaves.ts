/**
 * The leaf nodes and the declaration: XText ← XCData, XComment, XProcessingInstruction, XDocumentType (nodes, under
 * XNode) and XDeclaration (a document's `<?xml …?>`, no node). https://learn.microsoft.com/dotnet/api/system.xml.linq
 */
import { defineType, prop, type Rt } from '../../runtime/core.js';
import { str } from '../helpers.js';
import { XCData, XComment, XDeclaration, XDocumentType, XProcessingInstruction, XText } from './nodes.js';
import { XNodeType } from './types.js';

const textValue = {
  get: (_rt: Rt, t: XText | XComment) => t.value,
  set: (_rt: Rt, t: XText | XComment, v: unknown) => {
    t.value = str(v, 'value');
  },
};

export const XTextType = defineType({
  name: 'XText',
  namespace: 'System.Xml.Linq',
  base: XNodeType,
  classes: [XText],
  construct: (_rt, args) =>
    args[0] instanceof XText ? new XText(args[0].value) : new XText(str(args[0], 'value')),
  props: { Value: textValue },
});

export const XCDataType = defineType({
  name: 'XCData',
  namespace: 'System.Xml.Linq',
  base: XTextType,
  classes: [XCData],
  construct: (_rt, args) =>
    args[0] instanceof XText ? new XCData(args[0].value) : new XCData(str(args[0], 'value')),
});

export const XCommentType = defineType({
  name: 'XComment',
  namespace: 'System.Xml.Linq',
  base: XNodeType,
  classes: [XComment],
  construct: (_rt, args) =>
    args[0] instanceof XComment ? new XComment(args[0].value) : new XComment(str(args[0], 'value')),
  props: { Value: textValue },
});

export const XProcessingInstructionType = defineType({
  name: 'XProcessingInstruction',
  namespace: 'System.Xml.Linq',
  base: XNodeType,
  classes: [XProcessingInstruction],
  construct: (_rt, args) =>
    args[0] instanceof XProcessingInstruction
      ? args[0].clone()
      : new XProcessingInstruction(str(args[0], 'target'), str(args[1], 'data')),
  props: {
    Target: {
      get: (_rt, p: XProcessingInstruction) => p.target,
      set: (_rt, p: XProcessingInstruction, v) => {
        p.target = str(v, 'value');
      },
    },
    Data: {
      get: (_rt, p: XProcessingInstruction) => p.data,
      set: (_rt, p: XProcessingInstruction, v) => {
        p.data = str(v, 'value');
      },
    },
  },
});

const nullableString = (v: unknown): string | null => (v === null || v === undefined ? null : str(v));

export const XDocumentTypeType = defineType({
  name: 'XDocumentType',
  namespace: 'System.Xml.Linq',
  base: XNodeType,
  classes: [XDocumentType],
  construct: (_rt, args) =>
    args[0] instanceof XDocumentType
      ? args[0].clone()
      : new XDocumentType(
          str(args[0], 'name'),
          nullableString(args[1]),
          nullableString(args[2]),
          nullableString(args[3]),
        ),
  props: {
    Name: prop((d: XDocumentType) => d.name),
    PublicId: prop((d: XDocumentType) => d.publicId),
    SystemId: prop((d: XDocumentType) => d.systemId),
    InternalSubset: prop((d: XDocumentType) => d.internalSubset),
  },
});

/** XDeclaration.ToString: `<?xml version="1.0" encoding="utf-8" standalone="yes"?>`, the parts that are set. */
function declarationText(d: XDeclaration): string {
  let s = '<?xml';
  if (d.version !== null) s += ` version="${d.version}"`;
  if (d.encoding !== null) s += ` encoding="${d.encoding}"`;
  if (d.standalone !== null) s += ` standalone="${d.standalone}"`;
  return `${s}?>`;
}

const declarationPart = (key: 'version' | 'encoding' | 'standalone') => ({
  get: (_rt: Rt, d: XDeclaration) => d[key],
  set: (_rt: Rt, d: XDeclaration, v: unknown) => {
    d[key] = nullableString(v);
  },
});

export const XDeclarationType = defineType({
  name: 'XDeclaration',
  namespace: 'System.Xml.Linq',
  classes: [XDeclaration],
  construct: (_rt, args) =>
    args[0] instanceof XDeclaration
      ? new XDeclaration(args[0].version, args[0].encoding, args[0].standalone)
      : new XDeclaration(nullableString(args[0]), nullableString(args[1]), nullableString(args[2])),
  props: {
    Version: declarationPart('version'),
    Encoding: declarationPart('encoding'),
    Standalone: declarationPart('standalone'),
  },
  methods: { ToString: (_rt, d: XDeclaration) => declarationText(d) },
});
