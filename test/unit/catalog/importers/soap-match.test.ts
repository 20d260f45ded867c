import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ImportedApi } from '../../../../src/catalog/importers/model.js';
import {
  firstBodyElement,
  matchSoapOperation,
  needsBody,
  requestAction,
} from '../../../../src/catalog/importers/soap-match.js';
import { importer } from '../../../../src/catalog/importers/wsdl.js';

const envelope11 = (body: string, header = '') =>
  `<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/">${header}<s:Body>${body}</s:Body></s:Envelope>`;
const envelope12 = (body: string) =>
  `<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body>${body}</env:Body></env:Envelope>`;

describe('requestAction', () => {
  it.each([
    [{ soapAction: '"http://tempuri.org/Add"' }, 'http://tempuri.org/Add'],
    [{ soapAction: 'http://tempuri.org/Add' }, 'http://tempuri.org/Add'],
    [{ soapAction: '""' }, undefined],
    [
      { contentType: 'application/soap+xml; charset=utf-8; action="urn:stock#GetQuote"' },
      'urn:stock#GetQuote',
    ],
    [{ contentType: 'application/soap+xml;action=urn:x' }, 'urn:x'],
    [{ contentType: 'text/xml; charset=utf-8' }, undefined],
    [{ soapAction: '""', contentType: 'application/soap+xml; action="urn:y"' }, 'urn:y'],
  ])('%j → %s', (headers, action) => {
    expect(requestAction(headers)).toBe(action);
  });
});

describe('firstBodyElement', () => {
  it('finds the first element of a SOAP 1.1 body, past the header', () => {
    expect(
      firstBodyElement(
        envelope11(
          '<m:Add xmlns:m="http://tempuri.org/messages"><m:intA>1</m:intA></m:Add>',
          '<s:Header><a>1</a></s:Header>',
        ),
      ),
    ).toEqual({ namespace: 'http://tempuri.org/messages', localName: 'Add' });
  });

  it('finds it in a SOAP 1.2 body, with a default namespace', () => {
    expect(firstBodyElement(envelope12('<GetQuote xmlns="urn:stock:rpc"/>'))).toEqual({
      namespace: 'urn:stock:rpc',
      localName: 'GetQuote',
    });
  });

  it('gives nothing for an empty body, a non-SOAP document, malformed XML or a DOCTYPE', () => {
    expect(firstBodyElement(envelope11(''))).toBeUndefined();
    expect(firstBodyElement('<Add xmlns="http://tempuri.org/messages"/>')).toBeUndefined();
    expect(
      firstBodyElement('<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>'),
    ).toBeUndefined();
    expect(
      firstBodyElement(
        `<!DOCTYPE x [<!ENTITY e "boom">]>${envelope11('<m:Add xmlns:m="http://tempuri.org/messages"/>')}`,
      ),
    ).toBeUndefined();
  });
});

describe('matchSoapOperation on imported WSDLs', () => {
  let calculator: ImportedApi;
  let hotel: ImportedApi;
  beforeAll(async () => {
    const fixtures = path.join(import.meta.dirname, '../../../fixtures/catalog', 'wsdl');
    calculator = await importer.importFile(path.join(fixtures, 'calculator-1.1.wsdl'), { urlSuffix: 'c' });
    hotel = await importer.importFile(path.join(fixtures, 'hotel-2.0.wsdl'), { urlSuffix: 'h' });
  });

  it('matches by SOAPAction without reading the body', () => {
    expect(needsBody(calculator.operations, 'http://tempuri.org/Add')).toBe(false);
    expect(matchSoapOperation(calculator.operations, { action: 'http://tempuri.org/Add' })?.id).toBe('Add');
  });

  it('falls back to the body element when the action is empty or unknown', () => {
    const ping = { namespace: 'http://tempuri.org/messages', localName: 'Ping' };
    expect(needsBody(calculator.operations, undefined)).toBe(true);
    expect(matchSoapOperation(calculator.operations, { bodyElement: ping })?.id).toBe('Ping');
    expect(matchSoapOperation(calculator.operations, { action: 'urn:other', bodyElement: ping })?.id).toBe(
      'Ping',
    );
    const body = firstBodyElement(envelope11('<Ping xmlns="http://tempuri.org/messages"/>'));
    expect(matchSoapOperation(calculator.operations, { bodyElement: body })?.id).toBe('Ping');
  });

  it('finds nothing when neither the action nor the element is known', () => {
    expect(
      matchSoapOperation(calculator.operations, {
        action: 'urn:other',
        bodyElement: { namespace: 'http://tempuri.org/messages', localName: 'Divide' },
      }),
    ).toBeUndefined();
    expect(matchSoapOperation(calculator.operations, {})).toBeUndefined();
  });

  it('matches a WSDL 2.0 operation by its WS-Addressing action or its element', () => {
    expect(matchSoapOperation(hotel.operations, { action: 'http://greath.example.com/reserve' })?.id).toBe(
      'opMakeReservation',
    );
    expect(
      matchSoapOperation(hotel.operations, {
        bodyElement: {
          namespace: 'http://greath.example.com/2004/schemas/resSvc',
          localName: 'checkAvailability',
        },
      })?.id,
    ).toBe('opCheckAvailability');
  });

  it('uses the body element to choose among operations sharing one action', () => {
    const shared = [
      {
        id: 'a',
        soap: {
          version: '1.1' as const,
          action: 'urn:s',
          bodyElement: { namespace: 'urn:n', localName: 'A' },
        },
      },
      {
        id: 'b',
        soap: {
          version: '1.1' as const,
          action: 'urn:s',
          bodyElement: { namespace: 'urn:n', localName: 'B' },
        },
      },
    ];
    expect(needsBody(shared, 'urn:s')).toBe(true);
    expect(
      matchSoapOperation(shared, { action: 'urn:s', bodyElement: { namespace: 'urn:n', localName: 'B' } })
        ?.id,
    ).toBe('b');
  });
});
