/**
 * What the matched operation's definition declares, as the validation policies read it (validate-content,
 * validate-parameters, validate-headers, validate-status-code): its parameters, the media types and schemas of its
 * request body, and its responses. The catalog fills it from the operation's configuration (imported from OpenAPI,
 * or written by hand); src/catalog/importers/model.ts is the same shape with more fields.
 */
import type { DeclaredContent, DeclaredResponse } from './mock-content.js';
import type { XmlName, XmlSchemaSet } from './xml-schema.js';

export interface DeclaredParameter {
  readonly name: string;
  readonly required: boolean;
  readonly type: 'string' | 'integer' | 'number' | 'boolean';
  /** The full JSON Schema, when the definition says more than `type`. */
  readonly schema?: Readonly<Record<string, unknown>> | undefined;
}

export interface DefinedResponse extends DeclaredResponse {
  readonly headers?: readonly DeclaredParameter[] | undefined;
  /** The one media type (and schema) older configurations and the WSDL importer give instead of `content`. */
  readonly contentType?: string | undefined;
  readonly schema?: Readonly<Record<string, unknown>> | undefined;
}

export interface OperationDefinition {
  readonly templateParameters: readonly DeclaredParameter[];
  readonly queryParameters: readonly DeclaredParameter[];
  readonly headerParameters: readonly DeclaredParameter[];
  /** Every media type of the request body with its schema (none: the operation declares no body). */
  readonly requestContent?: readonly DeclaredContent[] | undefined;
  /** The body schema of the one media type older configurations name (`requestBody` + `requestContentType`). */
  readonly requestBody?: Readonly<Record<string, unknown>> | undefined;
  readonly requestContentType?: string | undefined;
  readonly responses: readonly DefinedResponse[];
  /** The XML schemas of the API's definition (a WSDL's `types`): what XML and SOAP bodies are validated against. */
  readonly xmlSchemas?: XmlSchemaSet | undefined;
  /** A SOAP operation's elements: the request's Body starts with `bodyElement`, the response's with `responseElement`. */
  readonly soap?:
    | { readonly bodyElement?: XmlName | undefined; readonly responseElement?: XmlName | undefined }
    | undefined;
}

/** The request body's media types and schemas, from `requestContent`, else from `requestBody`. */
export function requestContentOf(definition: OperationDefinition): readonly DeclaredContent[] {
  if (definition.requestContent !== undefined && definition.requestContent.length > 0)
    return definition.requestContent;
  if (definition.requestContentType === undefined) return [];
  return [{ contentType: definition.requestContentType, schema: definition.requestBody }];
}

/** A response's media types and schemas, from `content`, else from `contentType` + `schema`. */
export function responseContentOf(response: DefinedResponse | undefined): readonly DeclaredContent[] {
  if (response === undefined) return [];
  if (response.content !== undefined && response.content.length > 0) return response.content;
  if (response.contentType === undefined) return [];
  return [{ contentType: response.contentType, schema: response.schema }];
}
