import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

// The two examples of https://learn.microsoft.com/azure/api-management/xsl-transform-policy, through Envoy.
const REQUEST_TRANSFORM = `<xsl-transform>
    <parameter name="User-Agent">@(context.Request.Headers.GetValueOrDefault("User-Agent","non-specified"))</parameter>
    <xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
        <xsl:output method="xml" indent="yes" />
        <xsl:param name="User-Agent" />
        <xsl:template match="* | @* | node()">
            <xsl:copy>
                <xsl:if test="self::* and not(parent::*)">
                    <xsl:attribute name="User-Agent"><xsl:value-of select="$User-Agent" /></xsl:attribute>
                </xsl:if>
                <xsl:apply-templates select="* | @* | node()" />
            </xsl:copy>
        </xsl:template>
    </xsl:stylesheet>
  </xsl-transform>`;

const RESPONSE_TRANSFORM = `<xsl-transform>
      <xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
        <xsl:output omit-xml-declaration="yes" method="xml" indent="yes" />
        <xsl:template match="/"><total><xsl:value-of select="sum(//price)" /></total></xsl:template>
      </xsl:stylesheet>
</xsl-transform>`;

describe('xsl-transform through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) =>
      request.url === '/prices'
        ? {
            headers: { 'content-type': 'application/xml' },
            body: '<o><price>2.5</price><price>4</price></o>',
          }
        : { headers: { 'content-type': 'application/xml' }, body: request.body },
    );
    gateway = await startGateway(
      `apis:\n${apiYaml('xsl', backend.url, [
        ['request', 'POST', '/echo', 'request.xml'],
        ['response', 'GET', '/prices', 'response.xml'],
      ])}\n`,
      {
        'request.xml': policy({ inbound: REQUEST_TRANSFORM }),
        'response.xml': policy({ outbound: RESPONSE_TRANSFORM }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('transforms the request body the backend receives, with a parameter from an expression', async () => {
    const response = await fetch(`${gateway.url}/xsl/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml', 'user-agent': 'portcullis-test/1' },
      body: '<order id="7"><item>book</item></order>',
    });
    expect(response.status).toBe(200);
    const received = backend.received.at(-1)!;
    expect(received.body.replace(/>\s+</g, '><').trim()).toMatch(
      /^<order (id="7" User-Agent="portcullis-test\/1"|User-Agent="portcullis-test\/1" id="7")><item>book<\/item><\/order>$/,
    );
  });

  it('transforms the response body the client receives', async () => {
    const response = await fetch(`${gateway.url}/xsl/prices`);
    expect(response.status).toBe(200);
    expect((await response.text()).trim()).toBe('<total>6.5</total>');
  });

  it('refuses a request body with a DOCTYPE: 500 from on-error, the backend not called', async () => {
    const before = backend.received.length;
    const response = await fetch(`${gateway.url}/xsl/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]><a>&e;</a>',
    });
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('root:');
    expect(backend.received.length).toBe(before);
  });
});
