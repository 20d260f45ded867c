/**
 * LINQ to XML beyond XElement and XDocument: XObject, XNode, XText, XCData, XComment, XProcessingInstruction,
 * XDocumentType, XDeclaration, XNamespace, the node comparers, System.Xml.Linq.Extensions and XmlNodeType. Expected
 * values are those of the .NET API reference (https://learn.microsoft.com/dotnet/api/system.xml.linq.<type>, its
 * remarks and examples), named per test.
 */
import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

const q = (xml: string): string => JSON.stringify(xml);
const doc = (xml: string): string => `XDocument.Parse(${q(xml)})`;

describe('XObject and XNode', () => {
  // XObject.Parent: "the parent XElement", null for a node whose parent is the document; XObject.Document;
  // XObject.NodeType; XNode.NextNode / PreviousNode.
  const tree = doc('<Root><Child1>a</Child1><!--c--><Child2/></Root>');
  it.each([
    [`${tree}.Root.Parent == null`, 'True'],
    [`${tree}.Root.Element("Child1").Parent.Name.LocalName`, 'Root'],
    [`${tree}.Root.Element("Child1").Document.Root.Name.LocalName`, 'Root'],
    [`new XElement("a").Document == null`, 'True'],
    [`${tree}.Root.Element("Child1").NodeType`, 'Element'],
    [`${tree}.NodeType`, 'Document'],
    [`${tree}.Root.Element("Child1").FirstNode.NodeType`, 'Text'],
    [`${tree}.Root.Element("Child1").NextNode.NodeType`, 'Comment'],
    [`${tree}.Root.Element("Child2").PreviousNode is XComment`, 'True'],
    [`${tree}.Root.Element("Child2").NextNode == null`, 'True'],
    [`${tree}.Root.Attribute("x") == null`, 'True'],
    [`new XAttribute("k", "v").NodeType`, 'Attribute'],
    [`${tree}.Root.BaseUri`, ''],
    [`${tree}.Root.Element("Child2") is XObject`, 'True'],
    [`${tree}.Root.Element("Child2") is XContainer`, 'True'],
    [`${tree}.Root.FirstNode is XNode`, 'True'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  // XNode.AddAfterSelf / AddBeforeSelf / ReplaceWith / Remove, ElementsAfterSelf / NodesBeforeSelf, IsAfter / IsBefore.
  it.each([
    [
      'var r = new XElement("R", new XElement("A"), new XElement("C")); r.Element("A").AddAfterSelf(new XElement("B")); return string.Join(",", r.Elements().Select(e => e.Name.LocalName));',
      'A,B,C',
    ],
    [
      'var r = new XElement("R", new XElement("B")); r.Element("B").AddBeforeSelf("t", new XElement("A")); return r.ToString();',
      '<R>t<A /><B /></R>',
    ],
    [
      'var r = new XElement("R", new XElement("A"), new XElement("B")); r.Element("A").ReplaceWith(new XComment("was A")); return r.ToString();',
      '<R>\n  <!--was A-->\n  <B />\n</R>',
    ],
    [
      'var r = new XElement("R", new XElement("A"), new XElement("B"), new XElement("C")); return string.Join(",", r.Element("A").ElementsAfterSelf().Select(e => e.Name.LocalName));',
      'B,C',
    ],
    [
      'var r = new XElement("R", new XElement("A"), "t", new XElement("B")); return r.Element("B").NodesBeforeSelf().Count().ToString();',
      '2',
    ],
    [
      'var r = new XElement("R", new XElement("A"), new XElement("B")); return r.Element("B").IsAfter(r.Element("A")) + " " + r.Element("B").IsBefore(r.Element("A"));',
      'True False',
    ],
    [
      'var r = new XElement("R", new XElement("A", new XElement("AA")), new XElement("B")); return string.Join(",", r.Element("A").Element("AA").Ancestors().Select(e => e.Name.LocalName));',
      'A,R',
    ],
  ])('%s → %s', (block, expected) => {
    expect(showBlock(block)).toBe(expected);
  });

  it('Remove without a parent is an InvalidOperationException', () => {
    expect(failure('new XElement("a").Remove()')).toContain(
      'InvalidOperationException: The parent is missing.',
    );
  });

  // XNode.DeepEquals remarks: comments and processing instructions are ignored when elements are compared; nodes of
  // different types are never equal; attributes are compared by name and value.
  it.each([
    [
      `XNode.DeepEquals(XElement.Parse("<a x='1'><b>t</b><!--c--></a>"), XElement.Parse("<a x='1'><b>t</b></a>"))`,
      'True',
    ],
    [`XNode.DeepEquals(XElement.Parse("<a x='1'/>"), XElement.Parse("<a x='2'/>"))`, 'False'],
    [`XNode.DeepEquals(new XText("t"), new XCData("t"))`, 'False'],
    [`XNode.DeepEquals(new XComment("c"), new XComment("c"))`, 'True'],
    [`XNode.CompareDocumentOrder(new XComment("c"), null)`, '1'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('nodes of two trees have no document order', () => {
    // XNode.CompareDocumentOrder: InvalidOperationException, "the two nodes do not share a common ancestor".
    expect(failure(`XNode.CompareDocumentOrder(${tree}.Root.FirstNode, ${tree}.Root.LastNode)`)).toContain(
      'InvalidOperationException: A common ancestor is missing.',
    );
  });
});

describe('XText, XCData, XComment, XProcessingInstruction, XDocumentType, XDeclaration', () => {
  it.each([
    // XText.ToString: the text as XML (escaped); XCData.ToString: a CDATA section.
    ['new XText("a < b & c").ToString()', 'a &lt; b &amp; c'],
    ['new XText("t").Value', 't'],
    ['new XCData("Can contain <tags> & stuff").ToString()', '<![CDATA[Can contain <tags> & stuff]]>'],
    ['new XCData("x").NodeType', 'CDATA'],
    ['new XCData("x") is XText', 'True'],
    [`${doc('<r><![CDATA[<x>]]></r>')}.Root.Value`, '<x>'],
    [`${doc('<r><![CDATA[<x>]]></r>')}.Root.FirstNode is XCData`, 'True'],
    // XComment example: <!--This is a comment-->
    ['new XComment("This is a comment").ToString()', '<!--This is a comment-->'],
    [`${doc('<r><!--note--><a/></r>')}.Root.Nodes().OfType<XComment>().First().Value`, 'note'],
    // XComment is no part of XElement.Value (the concatenated text contents).
    [`${doc('<r>a<!--note-->b</r>')}.Root.Value`, 'ab'],
    // XProcessingInstruction example: <?xml-stylesheet href="mystyle.css" title="Compact" type="text/css"?>
    [
      'new XProcessingInstruction("xml-stylesheet", "href=\\"mystyle.css\\" title=\\"Compact\\" type=\\"text/css\\"").ToString()',
      '<?xml-stylesheet href="mystyle.css" title="Compact" type="text/css"?>',
    ],
    [`${doc('<?pi some data?><r/>')}.FirstNode is XProcessingInstruction`, 'True'],
    [`((XProcessingInstruction)${doc('<?pi some data?><r/>')}.FirstNode).Target`, 'pi'],
    [`((XProcessingInstruction)${doc('<?pi some data?><r/>')}.FirstNode).Data`, 'some data'],
    // XDocumentType: Name, PublicId, SystemId, InternalSubset.
    [
      `${doc('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd"><html/>')}.DocumentType.PublicId`,
      '-//W3C//DTD XHTML 1.0 Strict//EN',
    ],
    [
      `${doc('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd"><html/>')}.DocumentType.SystemId`,
      'http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd',
    ],
    [`${doc('<!DOCTYPE note SYSTEM "note.dtd"><note/>')}.DocumentType.Name`, 'note'],
    [`new XDocumentType("Pubs", null, "pubs.dtd", null).SystemId`, 'pubs.dtd'],
    [
      `new XDocumentType("Pubs", null, null, "<!ELEMENT Pubs (#PCDATA)>").InternalSubset`,
      '<!ELEMENT Pubs (#PCDATA)>',
    ],
    // XDeclaration example: <?xml version="1.0" encoding="utf-8" standalone="yes"?>
    [
      'new XDeclaration("1.0", "utf-8", "yes").ToString()',
      '<?xml version="1.0" encoding="utf-8" standalone="yes"?>',
    ],
    [`${doc('<?xml version="1.0" encoding="UTF-8"?><r/>')}.Declaration.Encoding`, 'UTF-8'],
    [`${doc('<r/>')}.Declaration == null`, 'True'],
    // XDocument.ToString leaves the declaration out; comments and instructions are its own lines.
    [
      `${doc('<?xml version="1.0"?><!--top--><r><a>1</a></r>')}.ToString()`,
      '<!--top-->\n<r>\n  <a>1</a>\n</r>',
    ],
    [
      'new XDocument(new XDeclaration("1.0", "utf-8", "yes"), new XComment("c"), new XElement("Root")).ToString()',
      '<!--c-->\n<Root />',
    ],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  // An element read with an end tag holds the empty string (IsEmpty false, written <a></a>); a self-closed one is empty.
  it.each([
    ['XElement.Parse("<a></a>").IsEmpty', 'False'],
    ['XElement.Parse("<a></a>").ToString()', '<a></a>'],
    ['XElement.Parse("<a/>").IsEmpty', 'True'],
    ['new XElement("a", "").ToString()', '<a></a>'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('a document takes one root element', () => {
    expect(failure('new XDocument(new XElement("a"), new XElement("b"))')).toContain(
      'InvalidOperationException: This operation would create an incorrectly structured document.',
    );
  });
});

describe('XNamespace and XName', () => {
  // XNamespace: `ns + "Root"` is an XName; None, Xml, Xmlns; implicit conversion from string; NamespaceName.
  it.each([
    [
      '((XNamespace)"http://www.adventure-works.com" + "Root").ToString()',
      '{http://www.adventure-works.com}Root',
    ],
    ['XNamespace.Get("urn:x").GetName("b").LocalName', 'b'],
    ['XNamespace.Xml.NamespaceName', 'http://www.w3.org/XML/1998/namespace'],
    ['XNamespace.Xmlns.NamespaceName', 'http://www.w3.org/2000/xmlns/'],
    ['XNamespace.None.NamespaceName', ''],
    ['XNamespace.Get("urn:x") == XNamespace.Get("urn:x")', 'True'],
    ['XNamespace.Get("urn:x") == "urn:x"', 'True'],
    ['XNamespace.Get("urn:x").ToString()', 'urn:x'],
    ['XName.Get("{urn:x}a").Namespace == XNamespace.Get("urn:x")', 'True'],
    ['XElement.Parse("<a/>").Name == "a"', 'True'],
    [
      'new XElement(XNamespace.Get("http://www.adventure-works.com") + "Root", "c").ToString()',
      '<Root xmlns="http://www.adventure-works.com">c</Root>',
    ],
    [`${doc('<r xmlns="urn:x"><a>1</a></r>')}.Root.Element(XNamespace.Get("urn:x") + "a").Value`, '1'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('a namespace declared with a string local works as in C#', () => {
    expect(
      showBlock('XNamespace ns = "urn:x"; var e = new XElement(ns + "a"); return e.Name.NamespaceName;'),
    ).toBe('urn:x');
  });

  // Namespace declarations are attributes (XAttribute.IsNamespaceDeclaration), and the prefixes they declare are the
  // ones written (.NET docs: "Namespaces overview (LINQ to XML)" and "How to control namespace prefixes").
  const soap = doc(
    '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><m:Get xmlns:m="urn:m"><m:id>1</m:id></m:Get></soap:Body></soap:Envelope>',
  );
  it.each([
    [
      `${soap}.ToString()`,
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">\n  <soap:Body>\n    <m:Get xmlns:m="urn:m">\n      <m:id>1</m:id>\n    </m:Get>\n  </soap:Body>\n</soap:Envelope>',
    ],
    // An inner element written alone declares the prefixes it uses.
    [
      `${soap}.Root.Elements().First().ToString()`,
      '<soap:Body xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">\n  <m:Get xmlns:m="urn:m">\n    <m:id>1</m:id>\n  </m:Get>\n</soap:Body>',
    ],
    [`${soap}.Root.FirstAttribute.IsNamespaceDeclaration`, 'True'],
    // XElement.GetPrefixOfNamespace / GetNamespaceOfPrefix / GetDefaultNamespace: the declarations in scope.
    [`${soap}.Descendants().Last().GetPrefixOfNamespace("urn:m")`, 'm'],
    [
      `${soap}.Descendants().Last().GetNamespaceOfPrefix("soap").NamespaceName`,
      'http://schemas.xmlsoap.org/soap/envelope/',
    ],
    [`${soap}.Root.GetNamespaceOfPrefix("m") == null`, 'True'],
    [
      `${doc('<r xmlns="urn:d"><a/></r>')}.Root.Element(XNamespace.Get("urn:d") + "a").GetDefaultNamespace().NamespaceName`,
      'urn:d',
    ],
    [`${doc('<r/>')}.Root.GetDefaultNamespace() == XNamespace.None`, 'True'],
    [`${soap}.Root.FirstAttribute.ToString()`, 'xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"'],
    [
      `${doc('<r xmlns="urn:d"><a><b xmlns=""/></a></r>')}.ToString()`,
      '<r xmlns="urn:d">\n  <a>\n    <b xmlns="" />\n  </a>\n</r>',
    ],
    [
      'new XElement(XNamespace.Get("urn:a") + "r", new XAttribute(XNamespace.Xmlns + "a", "urn:a"), new XElement(XNamespace.Get("urn:a") + "c")).ToString()',
      '<a:r xmlns:a="urn:a">\n  <a:c />\n</a:r>',
    ],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('an attribute in a namespace is written with a prefix', () => {
    expect(show('new XElement("a", new XAttribute(XNamespace.Xml + "lang", "en")).ToString()')).toBe(
      '<a xml:lang="en" />',
    );
  });
});

describe('XNodeEqualityComparer and XNodeDocumentOrderComparer', () => {
  const xmlTree =
    'var xmlTree = new XElement("Root", new XText("Text content."), new XElement("Child1", "child1 content"), ' +
    'new XElement("Child2", "child2 content"), new XElement("Child3", "child3 content"), ' +
    'new XText("More text content."), new XElement("Child4", "child4 content"), new XElement("Child5", "child5 content"));';
  it("the docs' example: Child3 is before Child5", () => {
    // XNodeDocumentOrderComparer constructor example: Compare(child3, child5) < 0.
    expect(
      showBlock(
        `${xmlTree} var c = new XNodeDocumentOrderComparer(); return (c.Compare(xmlTree.Element("Child3"), xmlTree.Element("Child5")) < 0).ToString();`,
      ),
    ).toBe('True');
  });

  it('orders with LINQ and the collections', () => {
    expect(
      showBlock(
        `${xmlTree} return string.Join(",", xmlTree.Elements().Reverse().OrderBy(e => e, XNode.DocumentOrderComparer).Select(e => e.Name.LocalName));`,
      ),
    ).toBe('Child1,Child2,Child3,Child4,Child5');
  });

  it.each([
    // XNodeEqualityComparer: Equals by DeepEquals; equal nodes hash alike.
    ['new XNodeEqualityComparer().Equals(XElement.Parse("<a>1</a>"), XElement.Parse("<a>1</a>"))', 'True'],
    ['new XNodeEqualityComparer().Equals(XElement.Parse("<a>1</a>"), XElement.Parse("<a>2</a>"))', 'False'],
    [
      'new XNodeEqualityComparer().GetHashCode(XElement.Parse("<a>1</a>")) == new XNodeEqualityComparer().GetHashCode(XElement.Parse("<a>1<!--x--></a>"))',
      'True',
    ],
    [
      'new[] { XElement.Parse("<a>1</a>"), XElement.Parse("<a>1</a>"), XElement.Parse("<a>2</a>") }.Distinct(XNode.EqualityComparer).Count()',
      '2',
    ],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});

describe('System.Xml.Linq.Extensions', () => {
  const purchase = doc(
    '<Root><Child1><GrandChild1 a="1">g1</GrandChild1></Child1><Child2><GrandChild2 a="2">g2</GrandChild2><GrandChild3/></Child2></Root>',
  );
  it.each([
    // Extensions.Elements / Descendants / Attributes / Nodes: the axis of every element of the source, in order.
    [
      `string.Join(",", ${purchase}.Root.Elements().Elements().Select(e => e.Name.LocalName))`,
      'GrandChild1,GrandChild2,GrandChild3',
    ],
    [`${purchase}.Root.Elements().Elements("GrandChild2").Count()`, '1'],
    [
      `string.Join(",", ${purchase}.Root.Elements().Descendants().Attributes("a").Select(a => a.Value))`,
      '1,2',
    ],
    [`${purchase}.Root.Elements().Attributes().Count()`, '0'],
    [`${purchase}.Root.Elements().Nodes().Count()`, '3'],
    [`${purchase}.Root.Elements().DescendantNodes().Count()`, '5'],
    [`${purchase}.Root.Elements().DescendantNodesAndSelf().Count()`, '7'],
    [`${purchase}.Root.Elements().DescendantsAndSelf().Count()`, '5'],
    // Ancestors yields the ancestors of each source node, duplicates kept.
    [
      `string.Join(",", ${purchase}.Descendants("GrandChild2").Ancestors().Select(e => e.Name.LocalName))`,
      'Child2,Root',
    ],
    [
      `${purchase}.Root.Descendants().Where(e => e.Name.LocalName.StartsWith("Grand")).Ancestors().Count()`,
      '6',
    ],
    [
      `${purchase}.Root.Descendants().Where(e => e.Name.LocalName.StartsWith("Grand")).AncestorsAndSelf("Root").Count()`,
      '3',
    ],
    [
      `string.Join(",", ${purchase}.Descendants().Reverse().InDocumentOrder().Select(e => e.Name.LocalName))`,
      'Root,Child1,GrandChild1,Child2,GrandChild2,GrandChild3',
    ],
    // The static call form, written qualified (Newtonsoft.Json.Linq has an Extensions class too).
    [`System.Xml.Linq.Extensions.Elements(${purchase}.Root.Elements()).Count()`, '3'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('Remove removes every node or attribute of the sequence', () => {
    expect(
      showBlock(
        `var d = ${purchase}; d.Descendants().Where(e => e.Name.LocalName.StartsWith("Grand")).Remove(); return d.ToString();`,
      ),
    ).toBe('<Root>\n  <Child1 />\n  <Child2 />\n</Root>');
    expect(
      showBlock(
        `var d = ${purchase}; d.Descendants().Attributes("a").Remove(); return d.Descendants().Attributes().Count().ToString();`,
      ),
    ).toBe('0');
  });

  it('refuses a sequence that holds no nodes', () => {
    expect(failure('new[] { 1, 2 }.Elements().Count()')).toContain(
      "InvalidCastException: Unable to cast object of type 'System.Int32' to type 'System.Xml.Linq.XContainer'",
    );
  });
});

describe('XmlNodeType', () => {
  // System.Xml.XmlNodeType values: Element = 1, Text = 3, CDATA = 4, ProcessingInstruction = 7, Comment = 8,
  // Document = 9, DocumentType = 10.
  it.each([
    ['(int)XmlNodeType.Element', '1'],
    ['(int)XmlNodeType.CDATA', '4'],
    ['(int)XmlNodeType.ProcessingInstruction', '7'],
    ['(int)XmlNodeType.DocumentType', '10'],
    ['new XComment("c").NodeType == XmlNodeType.Comment', 'True'],
    ['System.Xml.XmlNodeType.Text.ToString()', 'Text'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});
