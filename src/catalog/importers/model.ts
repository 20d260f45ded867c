/**
 * What an importer produces: one API in the shape of the gateway configuration's `apis:` entry (so it can be
 * written into a gateway file as is), plus what the configuration does not carry yet and the importers know —
 * template parameter descriptions, response schemas and, for SOAP, what the operation matcher needs.
 * Plain data only: it is printed as YAML and validated by the configuration schema.
 */
import { DiagnosticsError } from '../../diagnostic.js';
import type { XsdDocument } from '../../policy/shared/xml-schema.js';

/** A JSON Schema (draft 2020-12 vocabulary; OpenAPI 3.0 / Swagger 2.0 schemas are converted to it). */
export type JsonSchema = Record<string, unknown>;

/** The configuration's scalar parameter types; anything else is `string` with its full `schema` kept. */
export type ParameterType = 'string' | 'integer' | 'number' | 'boolean';

export interface ImportedParameter {
  name: string;
  description?: string;
  required: boolean;
  type: ParameterType;
  /** The parameter's full schema, when it says more than `type` (enum, format, array items, …). */
  schema?: JsonSchema;
}

export interface ImportedResponse {
  /** `200`, `4XX` or `default`, as the definition wrote it. */
  status: string;
  description?: string;
  /** Media type of `schema` (the JSON one when the definition offers several). */
  contentType?: string;
  schema?: JsonSchema;
  /** The response headers the definition declares (validate-headers checks the backend's against them). */
  headers?: ImportedParameter[];
  /**
   * Every media type the definition gives for this response, in its order, with its example: what mock-response
   * answers with (the example first, else a sample of the schema; the first media type unless the policy names one).
   */
  content?: ResponseContent[];
}

export interface ResponseContent {
  contentType: string;
  schema?: JsonSchema;
  /** The definition's example as JSON data (a string for a text or XML example); absent when it gives none. */
  example?: unknown;
}

/** A qualified XML name: the element a SOAP body starts with. An empty namespace means "no namespace". */
export interface XmlName {
  namespace: string;
  localName: string;
}

/**
 * How a SOAP pass-through operation is recognised among the API's operations, which all share `POST /`:
 * by `action` first (SOAP 1.1 `SOAPAction` header, SOAP 1.2 `action` parameter of the Content-Type), then by
 * the first child element of `soap:Body`.
 */
export interface SoapMatch {
  version: '1.1' | '1.2';
  /** Absent when the binding declares none (or an empty one): only `bodyElement` identifies the operation. */
  action?: string;
  /** Absent when the input is `#any`/`#none` or has no element part. */
  bodyElement?: XmlName;
  /** The element the response body starts with, when the output declares one. */
  responseElement?: XmlName;
}

export interface ImportedOperation {
  id: string;
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'TRACE';
  /** API Management URL template relative to the API, e.g. `/api/Course/{id}`. */
  urlTemplate: string;
  displayName?: string;
  description?: string;
  /** One per `{name}` of `urlTemplate`, in template order. */
  templateParameters: ImportedParameter[];
  queryParameters: ImportedParameter[];
  headerParameters: ImportedParameter[];
  /** JSON Schema of the request body, when the operation takes a JSON (or form) body. */
  requestBody?: JsonSchema;
  requestBodyRequired?: boolean;
  /** Media type of `requestBody`. */
  requestContentType?: string;
  /** Every media type the definition gives for the request body, with its schema (validate-content reads them). */
  requestContent?: ResponseContent[];
  responses: ImportedResponse[];
  /** Present on every operation of a SOAP API. */
  soap?: SoapMatch;
}

export interface ImportedApi {
  id: string;
  name: string;
  description?: string;
  urlSuffix: string;
  serviceUrl: string;
  /** `soap` for a WSDL pass-through API: the engine must match operations by `soap` instead of the template. */
  type: 'http' | 'soap';
  operations: ImportedOperation[];
  /** What the definition holds that the import leaves out, for the user to read (never part of the API entry). */
  notes?: string[];
  /**
   * A WSDL's XML schemas (its `types`), cut from the text the import read, or why they cannot be read: what
   * validate-content validates the API's bodies against, so a gateway's load does not read the file again. Never part
   * of the API entry.
   */
  xmlSchemas?: XsdDocument[] | { problem: string };
}

/** Choices the definition does not make: where the API is published, and overrides. */
export interface ImportOptions {
  urlSuffix: string;
  /** Defaults to a slug of the definition's title (or file name). */
  apiId?: string;
  /** Replaces the backend URL the definition declares (required when it declares none). */
  serviceUrl?: string;
  /**
   * The folder the definition came in, when it comes from someone else (an APIOps artifact folder from a pull
   * request or an archive): a reference to a file outside it, or to a URL, is refused (ImportRefusedError), never read.
   */
  root?: string;
}

/** The definition cannot be imported; nothing of it is returned. Each problem's path is a JSON pointer (OpenAPI) or
 * an element path (WADL/WSDL). */
export class ImportError extends DiagnosticsError {
  override readonly name: string = 'ImportError';
}

/**
 * The definition reaches for what it may not read — a file outside `root`, a URL — or past a bound (a YAML alias
 * bomb). Not a definition that is merely wrong: a caller importing many (`import apiops`) stops instead of leaving
 * the one API out.
 */
export class ImportRefusedError extends ImportError {
  override readonly name = 'ImportRefusedError';
}

/** An importer: reads one definition file (and what it references) into one API. */
export interface Importer {
  /** The word after `portcullis import`, e.g. `openapi`. */
  readonly format: string;
  readonly description: string;
  importFile(file: string, options: ImportOptions): Promise<ImportedApi>;
}

/** A lower-case id made of letters, digits and "-", as the configuration's API ids allow. */
export function slug(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .toLowerCase() || 'api'
  );
}

/** `http(s)://…` without a trailing "/", or undefined when `text` is not an absolute http(s) URL. */
export function httpUrl(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  return url.href.replace(/\/+$/, '');
}
