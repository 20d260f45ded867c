import { describe, expect, it, vi } from 'vitest';
import { PolicyLoadError } from '../../../../src/policy/diagnostics.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../../src/policy/document.js';
import { inbound, outbound } from '../../../doubles/policy-services.js';

// The two examples of https://learn.microsoft.com/azure/api-management/xsl-transform-policy, unchanged.
const REQUEST_EXAMPLE = `<xsl-transform>
    <parameter name="User-Agent">@(context.Request.Headers.GetValueOrDefault("User-Agent","non-specified"))</parameter>
    <xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
        <xsl:output method="xml" indent="yes" />
        <xsl:param name="User-Agent" />
        <xsl:template match="* | @* | node()">
            <xsl:copy>
                <xsl:if test="self::* and not(parent::*)">
                    <xsl:attribute name="User-Agent">
                        <xsl:value-of select="$User-Agent" />
                    </xsl:attribute>
                </xsl:if>
                <xsl:apply-templates select="* | @* | node()" />
            </xsl:copy>
        </xsl:template>
    </xsl:stylesheet>
  </xsl-transform>`;

const RESPONSE_EXAMPLE = `<xsl-transform>
      <xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
        <xsl:output omit-xml-declaration="yes" method="xml" indent="yes" />
        <!-- Copy all nodes directly-->
        <xsl:template match="node()| @*|*">
            <xsl:copy>
                <xsl:apply-templates select="@* | node()|*" />
            </xsl:copy>
        </xsl:template>
      </xsl:stylesheet>
</xsl-transform>`;

const stripSpace = (s: string): string => s.replace(/>\s+</g, '><').trim();

function loadErrors(statement: string): string[] {
  try {
    compilePolicyDocument(
      readPolicyDocument(`<policies><inbound>${statement}</inbound></policies>`, { file: 'p.xml' }),
      {
        scope: 'operation',
      },
    );
    return [];
  } catch (error) {
    if (error instanceof PolicyLoadError) return error.diagnostics.map((d) => `${d.code}: ${d.message}`);
    throw error;
  }
}

describe('xsl-transform', () => {
  it("docs example 1: adds the User-Agent parameter to the request body's root element", async () => {
    const { run } = await inbound(REQUEST_EXAMPLE, {
      method: 'POST',
      headers: [
        ['Content-Type', 'application/xml'],
        ['User-Agent', 'curl/8'],
      ],
      body: Buffer.from('<order id="7"><item>book</item></order>'),
    });
    const body = stripSpace(run.context.request.body!.bytes.toString());
    expect(body).toMatch(
      /^<order (id="7" User-Agent="curl\/8"|User-Agent="curl\/8" id="7")><item>book<\/item><\/order>$/,
    );
  });

  it('docs example 2: the identity transform copies the response body', async () => {
    const { response } = await outbound(RESPONSE_EXAMPLE, {
      headers: [['Content-Type', 'application/xml']],
      body: '<a x="1"><b>text &amp; more</b><c/></a>',
    });
    expect(stripSpace(response.body.toString())).toMatch(
      /^<a x="1"><b>text &amp; more<\/b><c( ?\/>|><\/c>)<\/a>$/,
    );
  });

  it('binds a parameter by parameter-name too (the page statement spells it so) and reads it in templates', async () => {
    const { response } = await outbound(
      `<xsl-transform><parameter parameter-name="greeting">hello</parameter>
        <xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
          <xsl:output method="xml" omit-xml-declaration="yes" />
          <xsl:param name="greeting" />
          <xsl:template match="/"><out g="{$greeting}"><xsl:value-of select="count(//n)" /></out></xsl:template>
        </xsl:stylesheet></xsl-transform>`,
      { body: '<r><n/><n/><n/></r>' },
    );
    expect(stripSpace(response.body.toString())).toBe('<out g="hello">3</out>');
  });

  it('refuses a body with a DOCTYPE (entities) before the processor reads it: 500, on-error', async () => {
    const { response, context } = await outbound(RESPONSE_EXAMPLE, {
      body: '<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]><a>&e;</a>',
    });
    expect(response.status).toBe(500);
    expect(context.lastError?.source).toBe('xsl-transform');
    expect(context.lastError?.message).toContain('document type declaration');
    expect(response.body.toString()).not.toContain('root:');
  });

  it('fails into on-error on a body that is not XML', async () => {
    const { response, context } = await outbound(RESPONSE_EXAMPLE, { body: '{"json": true}' });
    expect(response.status).toBe(500);
    expect(context.lastError?.reason).toBe('XslTransformFailed');
  });

  it('document() loads nothing: it is an empty node-set', async () => {
    const { response } = await outbound(
      `<xsl-transform><xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
          <xsl:output method="xml" omit-xml-declaration="yes" />
          <xsl:template match="/"><out><xsl:value-of select="count(document('file:///etc/passwd'))" /></out></xsl:template>
        </xsl:stylesheet></xsl-transform>`,
      { body: '<r/>' },
    );
    expect(stripSpace(response.body.toString())).toBe('<out>0</out>');
  });

  it.each([
    [
      'xsl:include',
      '<xsl-transform><xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:include href="http://example.com/x.xsl"/></xsl:stylesheet></xsl-transform>',
      'may not load other documents',
    ],
    [
      'xsl:import',
      '<xsl-transform><xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:import href="x.xsl"/></xsl:stylesheet></xsl-transform>',
      'may not load other documents',
    ],
    [
      'no stylesheet',
      '<xsl-transform><parameter name="a">1</parameter></xsl-transform>',
      'needs one <xsl:stylesheet>',
    ],
    [
      'not the XSLT namespace',
      '<xsl-transform><xsl:stylesheet version="1.0" xmlns:xsl="urn:other"/></xsl-transform>',
      'must declare xmlns:xsl',
    ],
    [
      'a parameter without a name',
      '<xsl-transform><parameter>1</parameter><xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"/></xsl-transform>',
      'needs its name',
    ],
  ])('refuses at load: %s', (_what, statement, message) => {
    expect(loadErrors(statement).join('\n')).toContain(message);
  });
});

describe('xsl-transform keeps the log clean', () => {
  const withMessage = (
    terminate: string,
  ) => `<xsl-transform><xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
      <xsl:output method="xml" omit-xml-declaration="yes" />
      <xsl:template match="/"><xsl:message terminate="${terminate}">secret <xsl:value-of select="/r" /></xsl:message><out/></xsl:template>
      <xsl:template match="*" /><xsl:template match="node()" />
    </xsl:stylesheet></xsl-transform>`;

  it('writes nothing of xsl:message or of its ambiguity warnings to the console; terminate="yes" stops it', async () => {
    const log = vi.spyOn(console, 'log');
    const warn = vi.spyOn(console, 'warn');
    try {
      const kept = await outbound(withMessage('no'), { body: '<r>token-123</r>' });
      expect(kept.response.body.toString()).toContain('<out');
      const stopped = await outbound(withMessage('yes'), { body: '<r>token-123</r>' });
      expect(stopped.response.status).toBe(500);
      expect(stopped.context.lastError?.message).toContain('terminated');
      expect([...log.mock.calls, ...warn.mock.calls].flat().join('\n')).not.toContain('token-123');
      expect(warn.mock.calls.flat().join('\n')).not.toContain('XSLT Warning');
    } finally {
      log.mockRestore();
      warn.mockRestore();
    }
  });
});
