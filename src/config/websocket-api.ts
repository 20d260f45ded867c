/**
 * WebSocket APIs (`type: websocket`), as API Management has them
 * (https://learn.microsoft.com/azure/api-management/websocket-api): a pass-through whose one operation, the
 * system operation onHandshake, runs its policies on the opening handshake; after the upgrade the gateway only
 * carries messages both ways. This file holds what the configuration knows of them: the operation, and which policy
 * elements the handshake refuses.
 */
import type { Diagnostic } from '../diagnostic.js';
import type { CompiledDocument, Pipeline, SectionItem } from '../policy/index.js';
import type { ApiConfig, OperationConfig } from './schema.js';

/** API Management's name of the operation every WebSocket API has, and the only one it may have. */
export const onHandshakeId = 'onHandshake';

/**
 * The policies API Management does not support on onHandshake ("Unsupported policies" on the page above), by
 * element name: applied at the API or operation scope they are refused; inherited from the global or a product
 * scope they are skipped at run time.
 */
export const unsupportedOnHandshake: ReadonlyMap<string, string> = new Map([
  ['mock-response', 'Mock response'],
  ['cache-lookup', 'Get from cache'],
  ['cache-store', 'Store to cache'],
  ['cross-domain', 'Allow cross-domain calls'],
  ['cors', 'CORS'],
  ['jsonp', 'JSONP'],
  ['set-method', 'Set request method'],
  ['set-body', 'Set body'],
  ['xml-to-json', 'Convert XML to JSON'],
  ['json-to-xml', 'Convert JSON to XML'],
  ['xsl-transform', 'Transform XML using XSLT'],
  ['validate-content', 'Validate content'],
  ['validate-parameters', 'Validate parameters'],
  ['validate-headers', 'Validate headers'],
  ['validate-status-code', 'Validate status code'],
]);

/**
 * The operations an API serves. A WebSocket API's is onHandshake (`GET /`), created when the configuration lists
 * none (it may list it, to attach a policy); any other operation is a problem (`websocketApiProblems`).
 */
export function operationsOf(api: ApiConfig): OperationConfig[] {
  if (api.type !== 'websocket' || api.operations.length > 0) return api.operations;
  return [
    {
      id: onHandshakeId,
      method: 'GET',
      urlTemplate: '/',
      templateParameters: [],
      queryParameters: [],
      headerParameters: [],
      responses: [],
    },
  ];
}

/**
 * How an API inherits the global and product documents: a WebSocket API without the elements its handshake skips
 * (`withoutSkipped`: the document compiled again with `unsupportedOnHandshake` left out, nested ones too), after
 * its declaration and its own document are checked; any other as they are. Problems go to `problems`;
 * `configProblem` places one in the configuration file.
 */
export function inheritance(
  api: ApiConfig,
  apiIndex: number,
  apiDocument: CompiledDocument | undefined,
  problems: Diagnostic[],
  withoutSkipped: (document: CompiledDocument) => CompiledDocument | undefined,
  configProblem: (keys: (string | number)[], message: string) => Diagnostic,
): (document: CompiledDocument | undefined) => CompiledDocument | undefined {
  if (api.type !== 'websocket') return (document) => document;
  for (const [keys, message] of websocketApiProblems(api, apiIndex))
    problems.push(configProblem(keys, message));
  problems.push(...refusedOnHandshake(apiDocument, api.id));
  return (document) => document && withoutSkipped(document);
}

/**
 * An API's pipeline as its requests run it. A WebSocket API's needs no body: its handshake has none, and after the
 * 101 the bytes are the upgraded connection's, which Envoy carries without the engine — only headers cross the
 * stream, whatever a policy would read.
 */
export function pipelineOfType(api: ApiConfig, pipeline: Pipeline): Pipeline {
  if (api.type !== 'websocket') return pipeline;
  const needs = { ...pipeline.needs, requestBody: false, responseBody: false, responseStream: false };
  return Object.freeze({ ...pipeline, needs });
}

/** What is wrong with a WebSocket API's declaration: each problem's key path and message. */
export function websocketApiProblems(api: ApiConfig, apiIndex: number): [(string | number)[], string][] {
  const problems: [(string | number)[], string][] = [];
  if (api.definition !== undefined)
    problems.push([
      ['apis', apiIndex, 'definition'],
      'a WebSocket API has no definition file: its one operation is onHandshake',
    ]);
  if (api.operations.length > 1)
    problems.push([
      ['apis', apiIndex, 'operations'],
      `a WebSocket API has one operation, onHandshake; got ${api.operations.length}`,
    ]);
  for (const [index, operation] of api.operations.entries()) {
    const found = `${operation.id ?? '(no id)'} ${operation.method.toUpperCase()} ${operation.urlTemplate}`;
    if (
      operation.id !== onHandshakeId ||
      operation.method.toUpperCase() !== 'GET' ||
      operation.urlTemplate !== '/'
    )
      problems.push([
        ['apis', apiIndex, 'operations', index],
        `a WebSocket API's operation is "id: onHandshake, method: GET, urlTemplate: /"; got ${found}`,
      ]);
  }
  return problems;
}

/**
 * Every unsupported element a document applied at the API or operation scope of a WebSocket API uses, nested ones
 * included (a `set-body` inside a `choose`): API Management cannot apply them there.
 */
export function refusedOnHandshake(document: CompiledDocument | undefined, apiId: string): Diagnostic[] {
  if (document === undefined) return [];
  return statementsOf(document).flatMap((item) =>
    item.uses
      .filter((use) => unsupportedOnHandshake.has(use.element))
      .map((use) => ({
        file: use.file,
        line: use.line,
        column: use.column,
        code: 'unsupported-on-handshake',
        message: `<${use.element}> (${unsupportedOnHandshake.get(use.element)}) is not supported on the onHandshake operation of WebSocket API "${apiId}" (API Management refuses it there)`,
      })),
  );
}

function statementsOf(document: CompiledDocument): Extract<SectionItem, { kind: 'statement' }>[] {
  return [...document.sections.values()].flatMap((items) =>
    items.filter((item): item is Extract<SectionItem, { kind: 'statement' }> => item.kind === 'statement'),
  );
}
