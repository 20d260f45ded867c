import { describe, expect, it } from 'vitest';
import { formatDiagnostic, type PolicyDiagnostic, PolicyLoadError } from '../../../src/policy/diagnostics.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../src/policy/document.js';
import type { Scope } from '../../../src/policy/schema.js';
import type { NamedValue } from '../../../src/policy/source.js';

function diagnostics(
  xml: string,
  scope: Scope = 'operation',
  namedValues: Record<string, NamedValue> = {},
): string[] {
  try {
    const doc = readPolicyDocument(xml, { file: 'p.xml', namedValues: new Map(Object.entries(namedValues)) });
    compilePolicyDocument(doc, { scope });
    return [];
  } catch (err) {
    if (err instanceof PolicyLoadError) return err.diagnostics.map(formatDiagnostic);
    throw err;
  }
}

function codes(xml: string, scope: Scope = 'operation'): PolicyDiagnostic['code'][] {
  try {
    compilePolicyDocument(readPolicyDocument(xml, { file: 'p.xml' }), { scope });
    return [];
  } catch (err) {
    return (err as PolicyLoadError).diagnostics.map((d) => d.code);
  }
}

describe('reading documents', () => {
  it('accepts raw quotes, < and && inside attribute expressions and reports positions in the original text', () => {
    const xml = [
      '<policies>',
      '  <inbound>',
      '    <choose>',
      '      <when condition="@(context.Request.Headers.GetValueOrDefault("a","") == "x" && 1 < 2)">',
      '        <set-header name="b" exists-action="overide"><value>1</value></set-header>',
      '      </when>',
      '    </choose>',
      '  </inbound>',
      '</policies>',
    ].join('\n');
    expect(diagnostics(xml)).toEqual([
      'p.xml:5:45: policies/inbound/choose[1]/when[1]/set-header[1]: set-header/@exists-action must be one of override, skip, append, delete, got "overide"',
    ]);
  });

  it('rejects a DOCTYPE (no external entities)', () => {
    const xml =
      '<!DOCTYPE policies [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<policies><inbound>&x;</inbound></policies>';
    const out = diagnostics(xml);
    expect(out[0]).toBe('p.xml:1:1: a DOCTYPE is not allowed');
  });

  it('reports malformed XML at its position', () => {
    expect(diagnostics('<policies>\n  <inbound>\n</policies>')[0]).toBe(
      'p.xml:3:1: </policies> does not close <inbound>, which is open since 2:3',
    );
    expect(
      diagnostics('<policies>\n  <inbound>\n    <set-header name="x">\n  </inbound>\n</policies>')[0],
    ).toBe('p.xml:4:3: </inbound> does not close <set-header>, which is open since 3:5');
  });

  it('refuses a document the XML parser itself fails on, at its position (a fuzzing counterexample)', () => {
    // saxes throws a RangeError, not a well-formedness error, for an unpaired surrogate right after `<!`.
    expect(diagnostics('<policies>\n  <!\ud800')).toEqual([
      'p.xml:2:6: the document is not well-formed XML here',
    ]);
  });

  it('reports an unterminated expression at its start', () => {
    expect(
      diagnostics(
        '<policies>\n<inbound>\n<set-variable name="a" value="@(foo("x)" />\n</inbound></policies>',
      ),
    ).toEqual(['p.xml:3:36: unterminated expression: no ")" closes it']);
  });

  it('requires <policies> or <fragment> as root', () => {
    expect(diagnostics('<policy/>')).toEqual([
      'p.xml:1:1: the root element must be <policies> or <fragment>, got <policy>',
    ]);
  });
});

describe('named values', () => {
  it('substitutes values in attributes and text before parsing, positions staying in the original', () => {
    const xml =
      '<policies><inbound><set-header name="{{h}}"><value>{{v}}</value></set-header>\n<set-status code="{{bad}}" /></inbound></policies>';
    const out = diagnostics(xml, 'operation', {
      h: { value: 'X-Long-Header-Name' },
      v: { value: 'abc' },
      bad: { value: 'NaN' },
    });
    expect(out).toEqual([
      'p.xml:2:19: policies/inbound/set-status[2]: set-status/@code must be an integer, got "NaN"',
    ]);
  });

  it('names a named value nobody defined', () => {
    expect(
      diagnostics(
        '<policies><inbound>\n  <set-variable name="a" value="{{missing-one}}" />\n</inbound></policies>',
      ),
    ).toEqual(['p.xml:2:33: named value "missing-one" is not defined']);
  });

  it('leaves {{ … }} inside a Liquid body alone', () => {
    const xml =
      '<policies><inbound><return-response><set-body template="liquid">{{body.name}} {{context.Request.Method}}</set-body></return-response></inbound></policies>';
    expect(diagnostics(xml)).toEqual([]);
  });

  it('never shows a secret value in a message', () => {
    const out = diagnostics(
      '<policies><inbound><set-status code="{{s}}" /></inbound></policies>',
      'operation',
      {
        s: { value: 'hunter2', secret: true },
      },
    );
    expect(out).toEqual([
      'p.xml:1:38: policies/inbound/set-status[1]: set-status/@code must be an integer, got "***"',
    ]);
  });
});

describe('element declarations', () => {
  it('suggests the element meant by a typo', () => {
    expect(diagnostics('<policies><inbound><set-heder name="a" /></inbound></policies>')).toEqual([
      'p.xml:1:20: policies/inbound/set-heder[1]: unknown policy element <set-heder> (did you mean "set-header"?)',
    ]);
  });

  it('suggests the attribute meant by a typo', () => {
    expect(diagnostics('<policies><inbound><set-variable nme="a" value="b" /></inbound></policies>')).toEqual(
      [
        'p.xml:1:34: policies/inbound/set-variable[1]: <set-variable> has no attribute "nme" (did you mean "name"?)',
        'p.xml:1:20: policies/inbound/set-variable[1]: set-variable/@name is required, got no "name" attribute',
      ],
    );
  });

  it('rejects an element outside its sections and scopes', () => {
    expect(diagnostics('<policies><outbound><rewrite-uri template="/a" /></outbound></policies>')).toEqual([
      'p.xml:1:21: policies/outbound/rewrite-uri[1]: <rewrite-uri> is not allowed in the outbound section (allowed: inbound), got it in outbound',
    ]);
    expect(
      codes('<policies><inbound><quota calls="1" renewal-period="300" /></inbound></policies>', 'api'),
    ).toEqual(['misplaced-element']);
  });

  it('rejects an unimplemented element by name and an Azure-only one with its service', () => {
    expect(diagnostics('<policies><inbound><cross-domain /></inbound></policies>', 'global')).toEqual([
      'p.xml:1:20: policies/inbound/cross-domain[1]: "cross-domain" is not implemented: serves the crossdomain.xml of Adobe Flash and Silverlight clients, which browsers no longer run (issue #39)',
    ]);
    expect(
      diagnostics('<policies><inbound><send-service-bus-message queue-name="x" /></inbound></policies>'),
    ).toEqual([
      'p.xml:1:20: policies/inbound/send-service-bus-message[1]: "send-service-bus-message" is not supported: needs Azure Service Bus',
    ]);
  });

  it('rejects expressions where the reference forbids them', () => {
    expect(
      diagnostics('<policies><inbound><set-variable name="@(1)" value="b" /></inbound></policies>'),
    ).toEqual([
      'p.xml:1:40: policies/inbound/set-variable[1]: set-variable/@name does not allow policy expressions, got "@(1)"',
    ]);
  });

  it('requires an expression to be the whole value', () => {
    expect(
      diagnostics('<policies><inbound><set-variable name="a" value="@(1) + 2" /></inbound></policies>'),
    ).toEqual([
      'p.xml:1:50: policies/inbound/set-variable[1]: set-variable/@value: an expression must be the whole value, got "+ 2" after it',
    ]);
  });

  it('reports an expression syntax error at its position in the file', () => {
    const out = diagnostics(
      '<policies><inbound>\n<set-variable name="a" value="@(1 +)" />\n</inbound></policies>',
    );
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^p\.xml:2:\d+: policies\/inbound\/set-variable\[1\]: set-variable\/@value: /);
  });

  it('checks children: counts, names and order', () => {
    expect(diagnostics('<policies><inbound><choose /></inbound></policies>')).toEqual([
      'p.xml:1:20: policies/inbound/choose[1]: <choose> needs at least 1 <when>, got 0',
    ]);
    expect(
      diagnostics('<policies><inbound><choose><whne condition="true" /></choose></inbound></policies>'),
    ).toEqual([
      'p.xml:1:28: policies/inbound/choose[1]/whne[1]: <choose> accepts when, otherwise, got <whne> (did you mean "when"?)',
      'p.xml:1:20: policies/inbound/choose[1]: <choose> needs at least 1 <when>, got 0',
    ]);
  });

  it('accepts the optional id attribute on every element', () => {
    expect(
      diagnostics('<policies><inbound><set-variable id="v1" name="a" value="b" /></inbound></policies>'),
    ).toEqual([]);
  });

  it('allows <base /> at most once per section and only directly in a section', () => {
    expect(codes('<policies><inbound><base /><base /></inbound></policies>')).toEqual(['base']);
    expect(
      codes(
        '<policies><inbound><choose><when condition="true"><base /></when></choose></inbound></policies>',
      ),
    ).toEqual(['base']);
  });

  it('rejects unknown sections with a suggestion', () => {
    expect(diagnostics('<policies><inbond /></policies>')).toEqual([
      'p.xml:1:11: policies: <policies> holds only inbound, backend, outbound and on-error, got <inbond> (did you mean "inbound"?)',
    ]);
  });
});
