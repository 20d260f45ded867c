/**
 * How a request reaches one operation of a SOAP pass-through API (all of them `POST /`): as API Management does,
 * by the SOAP action first — the `SOAPAction` header (SOAP 1.1) or the `action` parameter of the Content-Type
 * (SOAP 1.2) — and, when that names no single operation, by the first element inside `soap:Body`.
 * Pure functions over the importers' `SoapMatch`, for the engine's matcher.
 */
import { SaxesParser } from 'saxes';
import type { SoapMatch, XmlName } from './model.js';

const ENVELOPES = ['http://schemas.xmlsoap.org/soap/envelope/', 'http://www.w3.org/2003/05/soap-envelope'];

/** The action a SOAP request names, or undefined (absent or empty, which identify nothing). */
export function requestAction(headers: { soapAction?: string; contentType?: string }): string | undefined {
  const header = headers.soapAction?.trim();
  if (header !== undefined) {
    // SOAP 1.1 sends it as a quoted string; some clients forget the quotes.
    const value = /^"(.*)"$/.exec(header)?.[1] ?? header;
    if (value !== '') return value;
  }
  const parameter = /;\s*action\s*=\s*("([^"]*)"|[^;\s]+)/i.exec(headers.contentType ?? '');
  const action = parameter?.[2] ?? parameter?.[1];
  return action === undefined || action === '' ? undefined : action;
}

/** The operations the action alone selects (several when the WSDL reuses an action). */
function byAction<T extends { readonly soap?: SoapMatch }>(
  operations: readonly T[],
  action: string | undefined,
) {
  return action === undefined ? [] : operations.filter((operation) => operation.soap?.action === action);
}

/** True when the action cannot decide on its own, so the engine must read the body to match the operation. */
export function needsBody(
  operations: readonly { readonly soap?: SoapMatch }[],
  action: string | undefined,
): boolean {
  return byAction(operations, action).length !== 1;
}

/** The operation a request is for, or undefined (API Management then answers 404 OperationNotFound). */
export function matchSoapOperation<T extends { readonly soap?: SoapMatch }>(
  operations: readonly T[],
  request: { readonly action?: string | undefined; readonly bodyElement?: XmlName | undefined },
): T | undefined {
  const sameAction = byAction(operations, request.action);
  if (sameAction.length === 1) return sameAction[0];
  const candidates = sameAction.length > 1 ? sameAction : operations;
  const element = request.bodyElement;
  if (!element) return undefined;
  return candidates.find(
    (operation) =>
      operation.soap?.bodyElement?.namespace === element.namespace &&
      operation.soap.bodyElement.localName === element.localName,
  );
}

class Found {
  constructor(readonly name: XmlName | undefined) {}
}

/**
 * The first element inside `Envelope/Body` of a SOAP message (1.1 or 1.2), or undefined when the text is not a
 * SOAP envelope. Stops reading at that element; a DOCTYPE makes the message unmatchable (never expanded).
 */
export function firstBodyElement(xml: string): XmlName | undefined {
  const parser = new SaxesParser({ xmlns: true });
  const path: XmlName[] = [];
  parser.on('doctype', () => {
    throw new Found(undefined);
  });
  parser.on('opentag', (tag) => {
    const name = { namespace: tag.uri ?? '', localName: tag.local ?? tag.name };
    const [envelope, body] = path;
    if (!envelope && !(name.localName === 'Envelope' && ENVELOPES.includes(name.namespace))) {
      throw new Found(undefined);
    }
    if (path.length === 2 && body!.localName === 'Body' && body!.namespace === envelope!.namespace) {
      throw new Found(name);
    }
    path.push(name);
  });
  parser.on('closetag', () => {
    path.pop();
  });
  parser.on('error', () => {
    throw new Found(undefined);
  });
  try {
    parser.write(xml).close();
  } catch (stop) {
    if (stop instanceof Found) return stop.name;
    return undefined;
  }
  return undefined;
}
