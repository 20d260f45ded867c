import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportError } from '../../../../src/catalog/importers/model.js';
import { importer } from '../../../../src/catalog/importers/wsdl.js';
import type { Diagnostic } from '../../../../src/diagnostic.js';

const fixtures = path.join(import.meta.dirname, '../../../fixtures/catalog', 'wsdl');
const load = (name: string) => importer.importFile(path.join(fixtures, name), { urlSuffix: 'soap' });

describe('WSDL 1.1', () => {
  it('imports the first SOAP port as a pass-through API: POST / per operation, matched by action or body', async () => {
    const api = await load('calculator-1.1.wsdl');
    expect(api).toEqual({
      id: 'calculator',
      name: 'Calculator',
      description: 'Integer arithmetic.',
      urlSuffix: 'soap',
      serviceUrl: 'http://calc.example.com/calculator.asmx',
      type: 'soap',
      operations: [
        {
          id: 'Add',
          method: 'POST',
          urlTemplate: '/',
          displayName: 'Add',
          description: 'Adds two integers.',
          templateParameters: [],
          queryParameters: [],
          headerParameters: [],
          requestContentType: 'text/xml',
          responses: [{ status: '200', contentType: 'text/xml' }],
          soap: {
            version: '1.1',
            action: 'http://tempuri.org/Add',
            bodyElement: { namespace: 'http://tempuri.org/messages', localName: 'Add' },
            responseElement: { namespace: 'http://tempuri.org/messages', localName: 'AddResponse' },
          },
        },
        {
          id: 'Ping',
          method: 'POST',
          urlTemplate: '/',
          displayName: 'Ping',
          templateParameters: [],
          queryParameters: [],
          headerParameters: [],
          requestContentType: 'text/xml',
          responses: [{ status: '200', contentType: 'text/xml' }],
          // soapAction="" identifies nothing: the body element does.
          soap: {
            version: '1.1',
            bodyElement: { namespace: 'http://tempuri.org/messages', localName: 'Ping' },
            responseElement: { namespace: 'http://tempuri.org/messages', localName: 'PingResponse' },
          },
        },
      ],
      // The schemas of its types, cut from the text read for the operations (validate-content's, at load).
      xmlSchemas: [
        expect.objectContaining({
          uri: `${path.join(fixtures, 'calculator-1.1.wsdl')}#schema1`,
          targetNamespace: 'http://tempuri.org/messages',
        }),
      ],
    });
  });

  it('names the rpc-style body element after the operation, in soap:body/@namespace (SOAP 1.2)', async () => {
    const api = await load('stock-rpc-1.1.wsdl');
    expect(api.serviceUrl).toBe('https://stock.example.com/soap');
    expect(api.id).toBe('stockquoteservice');
    expect(api.operations).toHaveLength(1);
    expect(api.operations[0]).toMatchObject({
      id: 'GetQuote',
      requestContentType: 'application/soap+xml',
      soap: {
        version: '1.2',
        action: 'urn:stock#GetQuote',
        bodyElement: { namespace: 'urn:stock:rpc', localName: 'GetQuote' },
        responseElement: { namespace: 'urn:stock:rpc', localName: 'GetQuoteResponse' },
      },
    });
  });
});

describe('WSDL 2.0', () => {
  it('imports the SOAP endpoint with operations of the interface and those it extends', async () => {
    const api = await load('hotel-2.0.wsdl');
    expect(api).toMatchObject({
      id: 'reservationservice',
      name: 'reservationService',
      description: 'Reservations.',
      serviceUrl: 'http://greath.example.com/2004/reservation',
      type: 'soap',
    });
    expect(api.operations.map((operation) => [operation.id, operation.description, operation.soap])).toEqual([
      [
        'opCheckAvailability',
        'Is a room free?',
        {
          version: '1.2',
          action: 'http://greath.example.com/2004/wsdl/resSvc/opCheckAvailability',
          bodyElement: {
            namespace: 'http://greath.example.com/2004/schemas/resSvc',
            localName: 'checkAvailability',
          },
          responseElement: {
            namespace: 'http://greath.example.com/2004/schemas/resSvc',
            localName: 'checkAvailabilityResponse',
          },
        },
      ],
      [
        'opMakeReservation',
        undefined,
        {
          version: '1.2',
          // No wsoap:action in the binding: the WS-Addressing action of the input.
          action: 'http://greath.example.com/reserve',
          bodyElement: {
            namespace: 'http://greath.example.com/2004/schemas/resSvc',
            localName: 'makeReservation',
          },
        },
      ],
      // #any names no element and there is no action: nothing but the order tells it apart.
      ['echo', undefined, { version: '1.2' }],
    ]);
    expect(
      api.operations.every((operation) => operation.method === 'POST' && operation.urlTemplate === '/'),
    ).toBe(true);
  });
});

describe('invalid WSDL', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'portcullis-wsdl-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });
  const problemsOf = async (text: string): Promise<readonly Diagnostic[]> => {
    const file = path.join(folder, 'service.wsdl');
    await writeFile(file, text);
    const error = await importer.importFile(file, { urlSuffix: 'a' }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    if (!(error instanceof ImportError)) throw new Error(`expected an ImportError, got ${String(error)}`);
    return error.problems.map((problem) => ({ ...problem, file: path.basename(problem.file) }));
  };
  const definitions = (body: string) => `<definitions xmlns="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" xmlns:tns="urn:t" targetNamespace="urn:t">
${body}
</definitions>
`;

  it('refuses a DOCTYPE', async () => {
    const problems = await problemsOf(
      '<!DOCTYPE definitions SYSTEM "http://evil.example/x.dtd">\n<definitions/>',
    );
    expect(problems).toEqual([
      { file: 'service.wsdl', line: 1, column: 1, message: 'a DOCTYPE is not allowed (no DTDs or entities)' },
    ]);
  });

  it('names the unknown message, the missing portType operation and the bad address, with positions', async () => {
    const problems = await problemsOf(
      definitions(`  <portType name="P">
    <operation name="A"><input message="tns:Nope"/></operation>
  </portType>
  <binding name="B" type="tns:P">
    <soap:binding/>
    <operation name="A"><input><soap:body use="literal"/></input></operation>
    <operation name="Z"/>
  </binding>
  <service name="S">
    <port name="SP" binding="tns:B"><soap:address location="mailto:someone"/></port>
  </service>`),
    );
    expect(problems).toEqual([
      {
        file: 'service.wsdl',
        line: 4,
        column: 25,
        path: 'definitions/portType[1]/operation[1]/input[1]',
        message: 'message="tns:Nope": no message named {urn:t}Nope in this document',
      },
      {
        file: 'service.wsdl',
        line: 9,
        column: 5,
        path: 'definitions/binding[1]/operation[2]',
        message: 'operation "Z" is not in portType "P"',
      },
      {
        file: 'service.wsdl',
        line: 12,
        column: 37,
        path: 'definitions/service[1]/port[1]/address[1]',
        message: 'address "mailto:someone" is not an absolute http(s) URL; pass --service-url',
      },
    ]);
  });

  it('needs a SOAP binding', async () => {
    expect(
      await problemsOf(
        definitions(
          '  <binding name="B" type="tns:P"/>\n  <service name="S"><port name="SP" binding="tns:B"/></service>',
        ),
      ),
    ).toEqual([
      {
        file: 'service.wsdl',
        line: 1,
        column: 1,
        path: 'definitions',
        message: 'no <service>/<port> uses a SOAP 1.1 or 1.2 binding: nothing to import',
      },
    ]);
  });

  it('refuses wsdl:import rather than import half a service', async () => {
    const problems = await problemsOf(definitions('  <import namespace="urn:x" location="other.wsdl"/>'));
    expect(problems[0]).toEqual({
      file: 'service.wsdl',
      line: 3,
      column: 3,
      path: 'definitions/import[1]',
      message: 'wsdl:import is not supported: merge the imported definitions into one file',
    });
  });

  it('refuses a WSDL 2.0 endpoint whose binding names an unknown interface', async () => {
    const problems =
      await problemsOf(`<description xmlns="http://www.w3.org/ns/wsdl" xmlns:tns="urn:t" targetNamespace="urn:t">
  <binding name="B" interface="tns:Missing" type="http://www.w3.org/ns/wsdl/soap"/>
  <service name="S" interface="tns:Missing"><endpoint name="E" binding="tns:B" address="http://x/"/></service>
</description>`);
    expect(problems).toEqual([
      {
        file: 'service.wsdl',
        line: 2,
        column: 3,
        path: 'description/binding[1]',
        message: 'interface="tns:Missing": no interface named {urn:t}Missing in this document',
      },
    ]);
  });
});
