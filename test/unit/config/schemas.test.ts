import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkGatewayFile, compileGateway } from '../../../src/config/gateway.js';
import { loadConfigText } from '../../../src/config/load.js';
import { inMemoryGateway } from './harness.js';

/**
 * The schema registry (`schemas:`), API Management's Schemas that validate-content's `schema-id` names
 * (learn.microsoft.com/azure/api-management/validate-content-policy, "Schemas for content validation").
 */
const DIR = '/tmp/portcullis-schemas';
const load = inMemoryGateway(DIR);

const gateway = (schemas: string, schemaId = 'order') => `schemas:
${schemas}
apis:
  - id: a
    urlSuffix: a
    serviceUrl: http://127.0.0.1:1
    operations:
      - id: o
        method: POST
        urlTemplate: /o
        policy: |
          <policies><inbound><validate-content unspecified-content-type-action="prevent" max-size="100" size-exceeded-action="prevent"><content type="application/json" validate-as="json" schema-id="${schemaId}" action="prevent" /></validate-content></inbound><backend><forward-request /></backend><outbound /><on-error /></policies>
`;

describe('the schema registry', () => {
  it('takes a schema from a JSON file beside the configuration or written in place', async () => {
    await load(gateway('  order: order.json'), { 'order.json': '{"type":"object"}' });
    await load(gateway('  order: { type: object, required: [id] }'));
  });

  it('is a load error when a policy names a schema it does not have, or a file is not a JSON object', async () => {
    await expect(load(gateway('  order: { type: object }', 'invoice'))).rejects.toThrow(
      /schema-id must name a schema of the configuration's schemas, got "invoice" \(known: order\)/,
    );
    await expect(load(gateway('  order: order.json'), { 'order.json': '[1]' })).rejects.toThrow(
      /schemas\.order.*schema file "order\.json" must hold a JSON object/,
    );
    await expect(load(gateway('  order: order.json'), { 'order.json': '{' })).rejects.toThrow(
      /schema file "order\.json" cannot be read as JSON/,
    );
  });

  it('takes an XML schema (XSD) from a .xsd file or written in place, for validate-as="xml" and "soap"', async () => {
    const xsd =
      '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="order"/></xs:schema>';
    const xmlPolicy = (text: string) =>
      text.replace('type="application/json" validate-as="json"', 'type="application/xml" validate-as="xml"');
    await load(xmlPolicy(gateway('  order: order.xsd')), { 'order.xsd': xsd });
    await load(xmlPolicy(gateway(`  order: '${xsd}'`)));
    await expect(load(gateway('  order: order.xsd'), { 'order.xsd': xsd })).rejects.toThrow(
      /"order" is an XML schema; validate-as="json" needs a JSON schema/,
    );
  });

  it('is a load error when an XML schema is not well-formed, not xs:schema, or declares a DOCTYPE', async () => {
    await expect(load(gateway('  order: order.xsd'), { 'order.xsd': '<xs:schema' })).rejects.toThrow(
      /schemas\.order.*XML schema file "order\.xsd".*is not a usable XSD: not well-formed XML/,
    );
    await expect(load(gateway('  order: order.xsd'), { 'order.xsd': '<schema/>' })).rejects.toThrow(
      /the root element must be xs:schema/,
    );
    await expect(
      load(gateway('  order: order.xsd'), {
        'order.xsd':
          '<!DOCTYPE s [<!ENTITY x SYSTEM "file:///etc/hostname">]><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">&x;</xs:schema>',
      }),
    ).rejects.toThrow(/a document type declaration is not allowed in a schema/);
  });

  it("gives a SOAP API's operations the XML schemas of its WSDL, and their elements", async () => {
    const wsdl = `<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="urn:shop" targetNamespace="urn:shop">
  <types><xs:schema targetNamespace="urn:shop"><xs:element name="Ping" type="xs:string"/></xs:schema></types>
  <message name="PingIn"><part name="p" element="tns:Ping"/></message>
  <portType name="Port"><operation name="Ping"><input message="tns:PingIn"/></operation></portType>
  <binding name="B" type="tns:Port"><soap:binding transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="Ping"><soap:operation soapAction="urn:ping"/><input><soap:body use="literal"/></input></operation></binding>
  <service name="S"><port name="P" binding="tns:B"><soap:address location="http://127.0.0.1:1/soap"/></port></service>
</definitions>`;
    const text = `apis:
  - id: shop
    urlSuffix: shop
    serviceUrl: http://127.0.0.1:1
    definition: { format: wsdl, file: shop.wsdl }
`;
    // The importers read the definition from the disk.
    const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-wsdl-'));
    writeFileSync(path.join(dir, 'shop.wsdl'), wsdl);
    const loaded = await loadConfigText(text, path.join(dir, 'gateway.yaml'));
    // The import read the file once, schemas with operations: the compile does not read it again.
    rmSync(dir, { recursive: true });
    const compiled = compileGateway(loaded);
    const operation = compiled.catalog.apis[0]!.operations[0]!;
    expect(operation.definition.soap?.bodyElement).toEqual({ namespace: 'urn:shop', localName: 'Ping' });
    expect(operation.definition.xmlSchemas?.name).toBe('shop');
    expect([...(operation.definition.xmlSchemas?.documents.keys() ?? [])]).toEqual([
      'urn:portcullis:definition:shop',
      `${dir}/shop.wsdl#schema1`,
    ]);
  });

  it('portcullis validate reports an XML schema that does not compile, where it is configured', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-xsd-'));
    const xsd =
      '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a" type="nowhere"/></xs:schema>';
    writeFileSync(
      path.join(dir, 'gateway.yaml'),
      `schemas:\n  good: { type: object }\n  broken: broken.xsd\n`,
    );
    writeFileSync(path.join(dir, 'broken.xsd'), xsd);
    const checked = await checkGatewayFile(path.join(dir, 'gateway.yaml'));
    rmSync(dir, { recursive: true });
    expect(checked.problems).toEqual([
      expect.stringMatching(
        /gateway\.yaml:3:\d+: .*schemas\.broken.*the XML schema does not compile: .*nowhere/,
      ),
    ]);
  });
});
