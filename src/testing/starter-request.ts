/**
 * The request a starter case sends for one operation, as a client of the API would send it: the template's
 * parameters filled, the subscription key of a subscription the configuration has for the API, a SOAP operation's
 * action and envelope, a JSON body with the fields its schema requires.
 */
import type { GatewayConfig } from '../config/schema.js';

type Api = GatewayConfig['apis'][number];
type Operation = Api['operations'][number];

export interface StarterRequest {
  parameters?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  subscriptionKey?: string;
}

export function starterRequest(config: GatewayConfig, api: Api, operation: Operation): StarterRequest {
  const parameters = [...operation.urlTemplate.matchAll(/\{\*?([^}]+)\}/g)].map((m) => m[1]!);
  const key = subscriptionKeyFor(config, api.id);
  const soap = operation.soap === undefined ? undefined : soapRequest(operation.soap);
  const body =
    soap?.body ?? (operation.requestBody === undefined ? undefined : sample(operation.requestBody));
  return {
    ...(parameters.length > 0
      ? { parameters: Object.fromEntries(parameters.map((name) => [name, '1'])) }
      : {}),
    ...(soap === undefined ? {} : { headers: soap.headers }),
    ...(body === undefined ? {} : { body }),
    ...(key === undefined ? {} : { subscriptionKey: key }),
  };
}

/**
 * The primary key of the first active subscription that admits calls to the API: all APIs, the API itself, or a
 * product that contains it (what API Management checks, see catalog/subscriptions.ts).
 */
export function subscriptionKeyFor(config: GatewayConfig, apiId: string): string | undefined {
  const productsWithApi = new Set(
    config.products.filter((product) => product.apis.includes(apiId)).map((product) => product.id),
  );
  const admits = (scope: GatewayConfig['subscriptions'][number]['scope']) =>
    scope === 'all' || ('api' in scope ? scope.api === apiId : productsWithApi.has(scope.product));
  return config.subscriptions.find(
    (subscription) =>
      subscription.state === 'active' && subscription.primaryKey && admits(subscription.scope),
  )?.primaryKey;
}

type SoapMatch = NonNullable<Operation['soap']>;

/** SOAP 1.1 names the action in `SOAPAction`, SOAP 1.2 in the Content-Type's `action` parameter. */
function soapRequest(soap: SoapMatch): { headers: Record<string, string>; body: string } {
  const element = soap.bodyElement;
  const content =
    element === undefined
      ? ''
      : element.namespace === ''
        ? `<${element.localName} />`
        : `<m:${element.localName} xmlns:m="${escapeXml(element.namespace)}" />`;
  const envelope =
    soap.version === '1.1'
      ? 'http://schemas.xmlsoap.org/soap/envelope/'
      : 'http://www.w3.org/2003/05/soap-envelope';
  const body = `<soap:Envelope xmlns:soap="${envelope}"><soap:Body>${content}</soap:Body></soap:Envelope>`;
  const action = soap.action === undefined ? '' : escapeQuoted(soap.action);
  const headers =
    soap.version === '1.1'
      ? {
          'content-type': 'text/xml; charset=utf-8',
          ...(soap.action === undefined ? {} : { SOAPAction: `"${action}"` }),
        }
      : {
          'content-type': `application/soap+xml; charset=utf-8${soap.action === undefined ? '' : `; action="${action}"`}`,
        };
  return { headers, body };
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
const escapeQuoted = (text: string) => text.replace(/["\\]/g, '\\$&');

/** A value of the schema with what it requires: its example when it gives one, else the required properties filled. */
function sample(schema: unknown, depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null || depth > 8) return undefined;
  const s = schema as Record<string, unknown>;
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      return 'x';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    default: {
      if (type !== 'object' && s.properties === undefined) return undefined;
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? (s.required as string[]) : [];
      return Object.fromEntries(required.map((name) => [name, sample(properties[name], depth + 1) ?? 'x']));
    }
  }
}
