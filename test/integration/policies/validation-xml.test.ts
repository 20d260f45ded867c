import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { policy } from '../../processes/gateway-files.js';

/**
 * validate-content with validate-as="soap" and "xml" through Envoy and the built engine (which loads libxml2 from
 * node_modules only now): a SOAP API imported from WSDL validated against the schemas of its `types`, and an XML
 * API against a schema of the registry (learn.microsoft.com/azure/api-management/validate-content-policy).
 */
const WSDL = `<?xml version="1.0"?>
<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="urn:shop" targetNamespace="urn:shop">
  <types>
    <xs:schema targetNamespace="urn:shop" elementFormDefault="qualified">
      <xs:element name="GetOrder"><xs:complexType><xs:sequence><xs:element name="id" type="xs:int"/></xs:sequence></xs:complexType></xs:element>
      <xs:element name="GetOrderResponse"><xs:complexType><xs:sequence><xs:element name="total" type="xs:decimal"/></xs:sequence></xs:complexType></xs:element>
    </xs:schema>
  </types>
  <message name="In"><part name="p" element="tns:GetOrder"/></message>
  <message name="Out"><part name="p" element="tns:GetOrderResponse"/></message>
  <portType name="Shop"><operation name="GetOrder"><input message="tns:In"/><output message="tns:Out"/></operation></portType>
  <binding name="B" type="tns:Shop"><soap:binding transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="GetOrder"><soap:operation soapAction="urn:shop/GetOrder"/>
      <input><soap:body use="literal"/></input><output><soap:body use="literal"/></output></operation>
  </binding>
  <service name="ShopService"><port name="P" binding="tns:B"><soap:address location="http://127.0.0.1:1/shop"/></port></service>
</definitions>`;

const ORDER_XSD = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:orders" elementFormDefault="qualified">
  <xs:element name="order"><xs:complexType><xs:sequence><xs:element name="id" type="xs:int"/></xs:sequence></xs:complexType></xs:element>
</xs:schema>`;

const envelope = (payload: string) =>
  `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${payload}</s:Body></s:Envelope>`;

const onError = `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>`;

describe('validate-content with XML schemas through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) => {
      if (request.body.includes('<id>13</id>'))
        return {
          headers: { 'content-type': 'text/xml' },
          body: envelope('<GetOrderResponse xmlns="urn:shop"><total>lots</total></GetOrderResponse>'),
        };
      return {
        headers: { 'content-type': 'text/xml' },
        body: envelope('<GetOrderResponse xmlns="urn:shop"><total>1.5</total></GetOrderResponse>'),
      };
    });
    gateway = await startGateway(
      `schemas:
  orders: orders.xsd
apis:
  - id: shop
    urlSuffix: shop
    serviceUrl: ${backend.url}
    definition: { format: wsdl, file: shop.wsdl }
    policy: shop.xml
  - id: orders
    urlSuffix: orders
    serviceUrl: ${backend.url}
    operations:
      - { id: add, method: POST, urlTemplate: /, requestContentType: application/xml }
    policy: orders.xml
`,
      {
        'shop.wsdl': WSDL,
        'orders.xsd': ORDER_XSD,
        'shop.xml': policy({
          inbound: `<validate-content unspecified-content-type-action="prevent" max-size="10000" size-exceeded-action="prevent">
      <content type="text/xml" validate-as="soap" action="prevent" />
    </validate-content>`,
          outbound: `<validate-content unspecified-content-type-action="prevent" max-size="10000" size-exceeded-action="prevent">
      <content type="text/xml" validate-as="soap" action="prevent" />
    </validate-content>`,
          onError,
        }),
        'orders.xml': policy({
          inbound: `<validate-content unspecified-content-type-action="prevent" max-size="10000" size-exceeded-action="prevent">
      <content type="application/xml" validate-as="xml" schema-id="orders" action="prevent" />
    </validate-content>`,
          onError,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  const soap = (payload: string) =>
    fetch(`${gateway.url}/shop`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/xml', SOAPAction: '"urn:shop/GetOrder"' },
      body: envelope(payload),
    });

  it("lets a SOAP request and answer that conform to the WSDL's schemas through", async () => {
    const response = await soap('<GetOrder xmlns="urn:shop"><id>7</id></GetOrder>');
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<total>1.5</total>');
  });

  it('refuses a SOAP request that does not conform before the backend (400), an answer that does not with 502', async () => {
    const before = backend.received.length;
    const request = await soap('<GetOrder xmlns="urn:shop"><id>seven</id></GetOrder>');
    expect(request.status).toBe(400);
    expect(request.headers.get('x-reason')).toBe('Bad request');
    expect(((await request.json()) as { message: string }).message).toMatch(
      /^Body of the request does not conform to the definition GetOrder, which is associated with the content type text\/xml\.\n\nElement '\{urn:shop\}id': 'seven'/,
    );
    expect(backend.received.length).toBe(before);
    const answer = await soap('<GetOrder xmlns="urn:shop"><id>13</id></GetOrder>');
    expect(answer.status).toBe(502);
    expect(answer.headers.get('x-reason')).toBe('Response not allowed');
  });

  it('validates an XML body against a schema of the registry', async () => {
    const post = (body: string) =>
      fetch(`${gateway.url}/orders`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/xml' },
        body,
      });
    expect((await post('<order xmlns="urn:orders"><id>1</id></order>')).status).toBe(200);
    const refused = await post('<order xmlns="urn:orders"><id>x</id></order>');
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /^Body of the request does not conform to the definition orders, which is associated with the content type application\/xml\./,
    );
  });
});
