import { describe, expect, it } from 'vitest';
import { wsdlSchemas } from '../../../../src/catalog/importers/wsdl-schemas.js';
import type { JToken } from '../../../../src/expr/index.js';
import { writeJson } from '../../../../src/expr/library/json/write.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../../src/policy/document.js';
import { buildPipeline } from '../../../../src/policy/pipeline.js';
import { PipelineRun } from '../../../../src/policy/runner.js';
import type { OperationDefinition } from '../../../../src/policy/shared/operation-definition.js';
import {
  definitionSchemaSet,
  readXsd,
  registryUri,
  type XsdDocument,
} from '../../../../src/policy/shared/xml-schema.js';
import { fakeServices, policies, request } from '../../../doubles/policy-services.js';

// validate-content with validate-as="xml" and "soap" (learn.microsoft.com/azure/api-management/validate-content-policy):
// XML schemas of the registry (`schema-id`) or of the API's WSDL; errors: the "Validation errors" table
// (includes/api-management-validation-policy-error-reference.md).

const ORDERS = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:orders" xmlns="urn:orders" elementFormDefault="qualified">
  <xs:include schemaLocation="/schemas/common"/>
  <xs:element name="order">
    <xs:complexType><xs:sequence>
      <xs:element name="id" type="xs:int"/>
      <xs:element name="currency" type="code"/>
    </xs:sequence></xs:complexType>
  </xs:element>
  <xs:element name="ping" type="xs:string"/>
</xs:schema>`;
const COMMON = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:simpleType name="code"><xs:restriction base="xs:string"><xs:length value="3"/></xs:restriction></xs:simpleType>
</xs:schema>`;
const LEAKY = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:include schemaLocation="file:///etc/hostname"/><xs:element name="a"/></xs:schema>`;

const xsd = (id: string, text: string): [string, XsdDocument] => {
  const read = readXsd(text);
  if ('problem' in read) throw new Error(read.problem);
  return [id, { uri: registryUri(id), text, targetNamespace: read.targetNamespace }];
};
const xmlRegistry = new Map([xsd('orders', ORDERS), xsd('common', COMMON), xsd('leaky', LEAKY)]);
const jsonRegistry = new Map([['pet', { type: 'object' }]]);

const WSDL = `<?xml version="1.0"?>
<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="urn:shop" targetNamespace="urn:shop">
  <types>
    <xs:schema targetNamespace="urn:shop" elementFormDefault="qualified">
      <xs:element name="GetOrder"><xs:complexType><xs:sequence><xs:element name="id" type="xs:int"/></xs:sequence></xs:complexType></xs:element>
      <xs:element name="GetOrderResponse"><xs:complexType><xs:sequence><xs:element name="total" type="tns:money"/></xs:sequence></xs:complexType></xs:element>
      <xs:element name="CancelOrder" type="xs:int"/>
      <xs:simpleType name="money"><xs:restriction base="xs:decimal"><xs:fractionDigits value="2"/></xs:restriction></xs:simpleType>
    </xs:schema>
  </types>
</definitions>`;

const wsdlDocuments = wsdlSchemas(WSDL, '/defs/shop.wsdl');
if ('problem' in wsdlDocuments) throw new Error(wsdlDocuments.problem);
const SHOP: OperationDefinition = {
  templateParameters: [],
  queryParameters: [],
  headerParameters: [],
  requestContentType: 'text/xml',
  // As the WSDL importer declares a response: its one media type, no `content` list.
  responses: [{ status: '200', contentType: 'text/xml' }],
  xmlSchemas: definitionSchemaSet('shop', wsdlDocuments),
  soap: {
    bodyElement: { namespace: 'urn:shop', localName: 'GetOrder' },
    responseElement: { namespace: 'urn:shop', localName: 'GetOrderResponse' },
  },
};
const XML_OPERATION: OperationDefinition = {
  templateParameters: [],
  queryParameters: [],
  headerParameters: [],
  requestContent: [{ contentType: 'application/xml' }],
  responses: [],
};

const policy = (inner: string, attributes = '') =>
  `<validate-content unspecified-content-type-action="prevent" max-size="102400" size-exceeded-action="prevent" errors-variable-name="errs" ${attributes}>${inner}</validate-content>`;
const content = (attributes: string) => `<content ${attributes} />`;
const registryXml = (action = 'prevent', extra = '') =>
  content(`type="application/xml" validate-as="xml" schema-id="orders" action="${action}" ${extra}`);

const errorsOf = (context: { variables: { get(name: string): unknown } }) =>
  JSON.parse(writeJson(null, context.variables.get('errs') as JToken, false));

const compile = (sections: Parameters<typeof policies>[0]) =>
  compilePolicyDocument(readPolicyDocument(policies(sections), { file: 'p.xml' }), {
    scope: 'operation',
    schemas: jsonRegistry,
    xmlSchemas: xmlRegistry,
  });

/** Where a load problem is reported, by its message. */
function problems(statement: string): string[] {
  try {
    compile({ inbound: statement });
    return [];
  } catch (error) {
    return (error as { diagnostics: { message: string }[] }).diagnostics.map((d) => d.message);
  }
}

async function send(
  statement: string,
  body: string,
  contentType = 'application/xml',
  definition: OperationDefinition = XML_OPERATION,
) {
  const run = new PipelineRun(
    buildPipeline({ operation: compile({ inbound: statement }) }),
    request({
      method: 'POST',
      headers: [['Content-Type', contentType]],
      body: Buffer.from(body),
      definition,
    }),
    fakeServices(),
  );
  const outcome = await run.onRequest();
  return { outcome, context: run.context };
}

const ORDER = '<order xmlns="urn:orders">\n  <id>7</id>\n  <currency>EUR</currency>\n</order>';
const envelope = (payload: string, version: '1.1' | '1.2' = '1.1') =>
  `<s:Envelope xmlns:s="${version === '1.1' ? 'http://schemas.xmlsoap.org/soap/envelope/' : 'http://www.w3.org/2003/05/soap-envelope'}"><s:Header/><s:Body>${payload}</s:Body></s:Envelope>`;

describe('validate-content: validate-as="xml" against a schema of the registry', () => {
  it('lets a body that conforms through and records no error', async () => {
    const { outcome, context } = await send(policy(registryXml()), ORDER);
    expect(outcome.kind).toBe('forward');
    expect(errorsOf(context)).toEqual([]);
  });

  it('prevent: 400, "Bad request", IncorrectMessage naming the schema, with the line of the offending element', async () => {
    const { outcome, context } = await send(policy(registryXml()), ORDER.replace('<id>7', '<id>seven'));
    if (outcome.kind !== 'respond') throw new Error('expected a refusal');
    expect(outcome.response.status).toBe(400);
    expect(context.lastError?.reason).toBe('Bad request');
    const details =
      'Body of the request does not conform to the definition orders, which is associated with the content type application/xml.';
    expect(context.lastError?.message).toMatch(
      new RegExp(
        `^${details}\\n\\nElement '\\{urn:orders\\}id': 'seven' is not a valid value .*xs:int.* Line: 2, Position: \\d+$`,
      ),
    );
    // The public response of an inbound IncorrectMessage is its details.
    expect(JSON.parse(outcome.response.body.toString()).message).toBe(context.lastError?.message);
    expect(errorsOf(context)).toEqual([
      {
        Name: 'application/xml',
        Type: 'RequestBody',
        ValidationRule: 'IncorrectMessage',
        Details: context.lastError?.message,
        Action: 'prevent',
      },
    ]);
  });

  it('any top-level element of the schema may be the root; any other root does not conform', async () => {
    expect((await send(policy(registryXml()), '<ping xmlns="urn:orders">hi</ping>')).outcome.kind).toBe(
      'forward',
    );
    const { context } = await send(policy(registryXml()), '<invoice xmlns="urn:orders"/>');
    expect(context.lastError?.message).toMatch(
      /No matching global declaration available for the validation root/,
    );
  });

  it('a schema includes another schema of the registry by /schemas/<id>, as the documentation shows', async () => {
    const { context } = await send(policy(registryXml()), ORDER.replace('EUR', 'EURO'));
    expect(context.lastError?.message).toMatch(/\{urn:orders\}currency.*length/);
  });

  it('max-size and size-exceeded-action apply to an XML body as to any (SizeLimit), before its content is validated', async () => {
    const statement = policy(registryXml()).replace('max-size="102400"', 'max-size="20"');
    const { context } = await send(statement, ORDER.replace('<id>7', '<id>seven'));
    expect(errorsOf(context)).toMatchObject([
      { Name: null, Type: 'RequestBody', ValidationRule: 'SizeLimit', Action: 'prevent' },
      { ValidationRule: 'IncorrectMessage' },
    ]);
    expect(context.lastError?.message).toMatch(
      /^Request's body is \d+ bytes long and it exceeds the configured limit of 20 bytes\.$/,
    );
  });

  it('detect records the error and lets the request through; ignore does not look', async () => {
    const detected = await send(policy(registryXml('detect')), '<ping xmlns="urn:other"/>');
    expect(detected.outcome.kind).toBe('forward');
    expect(errorsOf(detected.context)).toMatchObject([
      { ValidationRule: 'IncorrectMessage', Action: 'detect' },
    ]);
    const ignored = await send(policy(registryXml('ignore')), '<ping xmlns="urn:other"/>');
    expect(ignored.outcome.kind).toBe('forward');
    expect(errorsOf(ignored.context)).toEqual([]);
  });

  it('a body that is not well-formed XML cannot be validated (ValidationException, internal error to the client)', async () => {
    const { outcome, context } = await send(policy(registryXml()), '<order xmlns="urn:orders"><id>');
    if (outcome.kind !== 'respond') throw new Error('expected a refusal');
    expect(errorsOf(context)).toMatchObject([
      { Name: 'application/xml', ValidationRule: 'ValidationException' },
    ]);
    expect(context.lastError?.message).toMatch(
      /^Body of the request cannot be validated for the content type application\/xml\.\n\n/,
    );
    expect(JSON.parse(outcome.response.body.toString()).message).toBe(
      'The request could not be processed due to an internal error. Contact the API owner.',
    );
  });

  it('never expands a DOCTYPE: an external entity in the body is refused, not read', async () => {
    const xxe =
      '<!DOCTYPE ping [<!ENTITY x SYSTEM "file:///etc/hostname">]><ping xmlns="urn:orders">&x;</ping>';
    const { outcome, context } = await send(policy(registryXml()), xxe);
    expect(outcome.kind).toBe('respond');
    expect(errorsOf(context)).toMatchObject([{ ValidationRule: 'ValidationException' }]);
    expect(context.lastError?.message).toMatch(/A document type declaration is not allowed\.$/);
  });

  it('a schema that reaches outside the registry does not compile: the API schema could not be resolved', async () => {
    const statement = policy(
      content('type="application/xml" validate-as="xml" schema-id="leaky" action="prevent"'),
    );
    const { outcome, context } = await send(statement, '<a/>');
    expect(outcome.kind).toBe('respond');
    expect(errorsOf(context)).toMatchObject([{ Name: null, Type: 'ApiSchema', ValidationRule: null }]);
    expect(context.lastError?.message).toMatch(
      /^API's schema does not exist or it could not be resolved\.\n\n.*file:\/\/\/etc\/hostname/,
    );
  });

  it('allow-additional-properties applies to JSON schemas only: accepted, and XML is validated as the schema says', async () => {
    const statement = policy(registryXml('prevent', 'allow-additional-properties="true"'));
    const { context } = await send(statement, ORDER.replace('</order>', '<extra/></order>'));
    expect(context.lastError?.message).toMatch(/\{urn:orders\}extra.*not expected/);
  });

  it('a content type the definition does not specify and no content element names is Unspecified', async () => {
    const { context } = await send(policy(registryXml()), ORDER, 'text/plain');
    expect(errorsOf(context)).toMatchObject([{ Name: 'text/plain', ValidationRule: 'Unspecified' }]);
  });

  it('without a schema-id and with no XML schema in the API definition: "API\'s schema does not specify definitions."', async () => {
    const statement = policy(content('type="application/xml" validate-as="xml" action="prevent"'));
    const { context } = await send(statement, ORDER);
    expect(errorsOf(context)).toMatchObject([{ Type: 'ApiSchema' }]);
    expect(context.lastError?.message).toBe("API's schema does not specify definitions.");
  });

  it('refuses at load schema-ref with an XML schema and a schema-id of the wrong kind', () => {
    expect(
      problems(policy(content('validate-as="xml" schema-id="orders" schema-ref="#/a" action="prevent"'))),
    ).toEqual([expect.stringContaining('schema-ref applies to JSON schemas only')]);
    expect(problems(policy(content('validate-as="xml" schema-id="pet" action="prevent"')))).toEqual([
      expect.stringContaining(
        'must name an XML schema (XSD) of the configuration\'s schemas with validate-as="xml", got "pet" (XML schemas: orders, common, leaky)',
      ),
    ]);
    expect(problems(policy(content('validate-as="json" schema-id="orders" action="prevent"')))).toEqual([
      expect.stringContaining('"orders" is an XML schema; validate-as="json" needs a JSON schema'),
    ]);
  });
});

describe('validate-content: validate-as="soap"', () => {
  it("the documentation's example: any content type read as SOAP 1.2, the envelope's payload validated against a registered schema", async () => {
    const statement =
      '<validate-content unspecified-content-type-action="prevent" max-size="102400" size-exceeded-action="prevent" errors-variable-name="errs">' +
      '<content-type-map any-content-type-value="application/soap+xml" />' +
      '<content type="application/soap+xml" validate-as="soap" schema-id="orders" action="prevent" />' +
      '</validate-content>';
    for (const version of ['1.1', '1.2'] as const) {
      const ok = await send(statement, envelope(ORDER, version), 'text/xml');
      expect(ok.outcome.kind).toBe('forward');
    }
    const { context } = await send(statement, envelope('<ping xmlns="urn:orders"><b/></ping>', '1.2'), '');
    expect(context.lastError?.message).toMatch(
      /^Body of the request does not conform to the definition orders, which is associated with the content type application\/soap\+xml\.\n\nElement '\{urn:orders\}ping'/,
    );
  });

  it('a body that is no SOAP envelope cannot be validated (ValidationException)', async () => {
    const statement = policy(
      content('type="text/xml" validate-as="soap" schema-id="orders" action="prevent"'),
    );
    const { context } = await send(statement, ORDER, 'text/xml');
    expect(errorsOf(context)).toMatchObject([{ ValidationRule: 'ValidationException' }]);
    expect(context.lastError?.message).toMatch(/The root element is not a SOAP 1\.1 or 1\.2 Envelope/);
  });

  describe("against the API's WSDL (no schema-id)", () => {
    const statement = policy(content('type="text/xml" validate-as="soap" action="prevent"'));
    const getOrder = (id: string) => envelope(`<GetOrder xmlns="urn:shop"><id>${id}</id></GetOrder>`);

    it("validates the payload against the schemas of the WSDL's types", async () => {
      expect((await send(statement, getOrder('1'), 'text/xml', SHOP)).outcome.kind).toBe('forward');
      const { context } = await send(statement, getOrder('x'), 'text/xml', SHOP);
      expect(context.lastError?.message).toMatch(
        /^Body of the request does not conform to the definition GetOrder, which is associated with the content type text\/xml\.\n\nElement '\{urn:shop\}id': 'x'/,
      );
    });

    it("the payload must be the operation's element, even one another operation of the WSDL declares", async () => {
      const { context } = await send(
        statement,
        envelope('<CancelOrder xmlns="urn:shop">1</CancelOrder>'),
        'text/xml',
        SHOP,
      );
      expect(context.lastError?.message).toMatch(
        /\n\nThe element \{urn:shop\}CancelOrder is not the operation's \{urn:shop\}GetOrder\. Line: 1, Position: 0$/,
      );
      const empty = await send(statement, envelope(''), 'text/xml', SHOP);
      expect(empty.context.lastError?.message).toMatch(/the SOAP Body is empty/);
    });

    it("an operation whose element the WSDL's schemas do not declare is MissingDefinition", async () => {
      const refund = { ...SHOP, soap: { bodyElement: { namespace: 'urn:shop', localName: 'Refund' } } };
      const { outcome, context } = await send(
        statement,
        envelope('<Refund xmlns="urn:shop"/>'),
        'text/xml',
        refund,
      );
      if (outcome.kind !== 'respond') throw new Error('expected a refusal');
      expect(errorsOf(context)).toEqual([
        {
          Name: 'text/xml',
          Type: 'RequestBody',
          ValidationRule: 'MissingDefinition',
          Details:
            "API's schema does not contain definition Refund, which is associated with the content type text/xml.",
          Action: 'prevent',
        },
      ]);
      expect(JSON.parse(outcome.response.body.toString()).message).toBe(
        'The request could not be processed due to an internal error. Contact the API owner.',
      );
    });

    it('outbound: the response envelope against the operation\'s output, 502 "Response not allowed", internal error to the client', async () => {
      const outbound = policy(content('type="text/xml" validate-as="soap" action="prevent"'));
      const run = new PipelineRun(
        buildPipeline({ operation: compile({ outbound }) }),
        request({
          method: 'POST',
          headers: [['Content-Type', 'text/xml']],
          body: Buffer.from(getOrder('1')),
          definition: SHOP,
        }),
        fakeServices(),
      );
      expect((await run.onRequest()).kind).toBe('forward');
      const good = envelope('<GetOrderResponse xmlns="urn:shop"><total>1.50</total></GetOrderResponse>');
      const response = await run.onResponse({
        status: 200,
        headers: [['Content-Type', 'text/xml']],
        body: Buffer.from(good.replace('1.50', '1.505')),
      });
      expect(response.status).toBe(502);
      expect(run.context.lastError?.reason).toBe('Response not allowed');
      expect(run.context.lastError?.message).toMatch(
        /^Body of the response does not conform to the definition GetOrderResponse.*\n\n.*fractionDigits/s,
      );
      expect(JSON.parse(response.body.toString()).message).toBe(
        'The request could not be processed due to an internal error. Contact the API owner.',
      );
    });
  });
});

describe('the schemas of a WSDL', () => {
  it('are cut out of types with the namespace declarations they inherit, their lines kept', () => {
    if ('problem' in wsdlDocuments) throw new Error('unreachable');
    expect(wsdlDocuments).toHaveLength(1);
    expect(wsdlDocuments[0]).toMatchObject({
      uri: '/defs/shop.wsdl#schema1',
      targetNamespace: 'urn:shop',
      // Its global elements only: not the `id` and `total` declared inside them.
      elements: ['GetOrder', 'GetOrderResponse', 'CancelOrder'],
    });
    expect(wsdlDocuments[0]!.text).toMatch(
      /^<xs:schema xmlns="http:\/\/schemas\.xmlsoap\.org\/wsdl\/".* xmlns:tns="urn:shop"/,
    );
    expect(wsdlDocuments[0]!.text.endsWith('</xs:schema>')).toBe(true);
  });

  it('refuses a WSDL with a DOCTYPE', () => {
    expect(
      wsdlSchemas(`<!DOCTYPE d [<!ENTITY x "y">]>${WSDL.replace('<?xml version="1.0"?>\n', '')}`, 'f'),
    ).toEqual({
      problem: 'a document type declaration is not allowed',
    });
  });
});
