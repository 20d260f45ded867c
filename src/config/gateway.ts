import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Catalog } from '../catalog/catalog.js';
import { UrlTemplateError } from '../catalog/url-template.js';
import { type Diagnostic, DiagnosticsError, formatDiagnostic } from '../diagnostic.js';
import {
  buildPipeline,
  type CompiledDocument,
  type CompileOptions,
  compilePolicyDocument,
  type NamedValues,
  type Pipeline,
  type PolicyDocument,
  PolicyLoadError,
  readPolicyDocument,
  type Scope,
  type ScopeDocuments,
} from '../policy/index.js';
import {
  definitionSchemaSet,
  readXsd,
  registrySchemaSet,
  registryUri,
  type XmlSchemaSet,
  type XsdDocument,
  xmlSchemaProblem,
} from '../policy/shared/xml-schema.js';
import { isInlinePem } from '../state/options.js';
import { apiVersionSelector } from './api-versions.js';
import { type ResolvedBackend, resolveBackendCredentials, singleBackendUrls } from './backend-credentials.js';
import { ConfigError } from './config-error.js';
import { graphqlDefinitions, graphqlElementsOutside, graphqlOperations } from './graphql-api.js';
import { fileText, type LoadedConfig, loadConfigFile, problemInText } from './load.js';
import { isInlineXsd, policySource } from './policy-source.js';
import type { GatewayConfig } from './schema.js';
import {
  inheritance,
  operationsOf,
  pipelineOfType,
  refusedOnHandshake,
  unsupportedOnHandshake,
} from './websocket-api.js';

/** Everything the engine serves, compiled once from the configuration and its policy documents. */
export interface CompiledGateway {
  readonly config: GatewayConfig;
  readonly catalog: Catalog<Pipeline>;
  /** Named single backends (`set-backend-service backend-id`) by id → URL; pools are in `backendEntities`. */
  readonly backends: ReadonlyMap<string, string>;
  /** Every backend entity as configured, pools included, with its credentials' named values resolved. */
  readonly backendEntities: readonly ResolvedBackend[];
  /** How many policy documents (fragments included) were read and compiled: what `validate` says it checked. */
  readonly policyDocuments: number;
  /** The XML schema sets validate-content may compile (the registry's, the WSDLs'), where each is configured. */
  readonly xmlSchemaSets: readonly {
    readonly keys: readonly (string | number)[];
    readonly set: XmlSchemaSet;
  }[];
  /** The certificates of the store (tls.certificates) the policies can use (CompileContext.usesCertificate). */
  readonly certificatesUsed: CertificatesUsed;
}

/** Certificates of the store by id, or all of them (one chosen per request: by thumbprint, or a computed id). */
export interface CertificatesUsed {
  readonly ids: ReadonlySet<string>;
  readonly all: boolean;
}

/** Policy documents that failed to load, and configuration problems found while compiling. */
export class GatewayLoadError extends DiagnosticsError {
  override readonly name = 'GatewayLoadError';
}

/**
 * What a logger needs from outside the file, checked at load rather than by a sink that fails at its first event or
 * never connects: a Kafka logger's SASL password's environment variable (as for an environment named value) and its
 * TLS files (a PEM written in place needs none), an OTLP logger's headers from the environment. Each problem is the
 * key it is about and the message.
 */
function loggerProblems(loaded: LoadedConfig): [(string | number)[], string][] {
  const problems: [(string | number)[], string][] = [];
  for (const [id, logger] of Object.entries(loaded.config.state.loggers)) {
    const variable = logger.kafka?.sasl?.passwordEnv;
    if (variable !== undefined && process.env[variable] === undefined)
      problems.push([
        ['state', 'loggers', id, 'kafka', 'sasl', 'passwordEnv'],
        `environment variable ${variable} is not set (the SASL password of logger "${id}")`,
      ]);
    for (const [header, value] of Object.entries(logger.otlp?.headers ?? {}))
      if (typeof value !== 'string' && process.env[value.env] === undefined)
        problems.push([
          ['state', 'loggers', id, 'otlp', 'headers', header, 'env'],
          `environment variable ${value.env} is not set (header ${header} of logger "${id}")`,
        ]);
    const tls = logger.kafka?.tls;
    if (typeof tls !== 'object') continue;
    for (const key of ['ca', 'cert', 'key'] as const) {
      const source = tls[key];
      if (source === undefined || isInlinePem(source)) continue;
      const file = path.resolve(loaded.directory, source);
      if (!existsSync(file))
        problems.push([
          ['state', 'loggers', id, 'kafka', 'tls', key],
          `PEM file "${source}" not found (looked at ${file}); a PEM written in place starts with "-----BEGIN"`,
        ]);
    }
  }
  return problems;
}

/**
 * The XML schemas of an API's WSDL definition (its `types`), as one set validate-content validates against: as the
 * definition's import read them at load (the file is not read again).
 */
function definitionXmlSchemas(
  loaded: LoadedConfig,
  api: GatewayConfig['apis'][number],
  problem: (message: string) => void,
): XmlSchemaSet | undefined {
  const found = loaded.definitionSchemas.get(api.id);
  if (found === undefined || api.definition === undefined) return undefined;
  if ('problem' in found) {
    problem(`the schemas of "${api.definition.file}" cannot be read: ${found.problem}`);
    return undefined;
  }
  return found.length === 0 ? undefined : definitionSchemaSet(api.id, found);
}

/**
 * The schema registry: JSON schemas by id, each read from its file (relative to the configuration) or taken as
 * written; XML schemas (XSD) by id, a file ending in .xsd or .xml, or XML written in place (a leading `<`).
 */
function schemaRegistry(
  loaded: LoadedConfig,
  problem: (keys: (string | number)[], message: string) => void,
): { json: Map<string, Readonly<Record<string, unknown>>>; xml: Map<string, XsdDocument> } {
  const json = new Map<string, Readonly<Record<string, unknown>>>();
  const xml = new Map<string, XsdDocument>();
  for (const [id, value] of Object.entries(loaded.config.schemas)) {
    if (typeof value !== 'string') {
      json.set(id, value);
      continue;
    }
    const inPlace = isInlineXsd(value);
    const file = path.resolve(loaded.directory, value);
    let text: string;
    try {
      text = inPlace ? value : (fileText(loaded.files, file) ?? readFileSync(file, 'utf8'));
    } catch (error) {
      problem(
        ['schemas', id],
        `schema file "${value}" cannot be read (${file}): ${(error as Error).message}`,
      );
      continue;
    }
    if (inPlace || /\.(xsd|xml)$/i.test(value)) {
      const read = readXsd(text);
      if ('problem' in read)
        problem(
          ['schemas', id],
          `${inPlace ? 'the XML schema written in place' : `XML schema file "${value}" (${file})`} is not a usable XSD: ${read.problem}`,
        );
      else xml.set(id, { uri: registryUri(id), text, targetNamespace: read.targetNamespace });
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      problem(
        ['schemas', id],
        `schema file "${value}" cannot be read as JSON (${file}): ${(error as Error).message}`,
      );
      continue;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      problem(
        ['schemas', id],
        `schema file "${value}" must hold a JSON object, got ${JSON.stringify(parsed).slice(0, 40)}`,
      );
      continue;
    }
    json.set(id, parsed as Record<string, unknown>);
  }
  return { json, xml };
}

/**
 * Reads every policy document the configuration names, compiles each for its scope, stitches one pipeline per
 * operation and builds the catalog. Collects every problem before failing, so one run shows them all.
 */
export function compileGateway(loaded: LoadedConfig): CompiledGateway {
  const { config } = loaded;
  const problems: Diagnostic[] = [];
  // Read only when a problem must be placed in it (the loader has checked its text already).
  const configText = () =>
    fileText(loaded.files, loaded.file) ?? (existsSync(loaded.file) ? readFileSync(loaded.file, 'utf8') : '');
  const namedValues = namedValueTable(config, (keys, message) =>
    problems.push(problemInText(configText(), loaded.file, keys, message)),
  );
  const resolvedBackends = resolveBackendCredentials(config.backends, namedValues, (keys, message) =>
    problems.push(problemInText(configText(), loaded.file, keys, message)),
  );
  for (const [keys, message] of loggerProblems(loaded))
    problems.push(problemInText(configText(), loaded.file, keys, message));
  const policies = policyCompiler(loaded, problems, namedValues, (keys, message) =>
    problemInText(configText(), loaded.file, keys, message),
  );
  const { compile, withoutSkipped } = policies;
  const graphql = graphqlDefinitions(loaded, problems, (keys, message) =>
    problemInText(configText(), loaded.file, keys, message),
  );

  // A policy may trace a secret named value, a failing expression quote one: every request removes them from what it
  // reports (LastError.Message, its log lines and traces; policy/request-secrets.ts).
  const secrets = Object.freeze(
    [...namedValues.values()].filter((entry) => entry.secret === true).map((entry) => entry.value),
  );
  const build = (docs: ScopeDocuments): Pipeline => Object.freeze({ ...buildPipeline(docs), secrets });

  const globalDocument = compile(['policy'], config.policy, 'global');
  const productDocuments = new Map(
    config.products.map((product, index) => [
      product.id,
      compile(['products', index, 'policy'], product.policy, 'product'),
    ]),
  );
  const productsOf = (apiId: string) => config.products.filter((product) => product.apis.includes(apiId));

  const xmlSchemaSets: { keys: (string | number)[]; set: XmlSchemaSet }[] = [
    ...policies.registry.xml.keys(),
  ].map((id) => ({
    keys: ['schemas', id],
    set: registrySchemaSet(id, policies.registry.xml),
  }));
  const apis = config.apis.map((api, apiIndex) => {
    const products = productsOf(api.id);
    const xmlSchemas = definitionXmlSchemas(loaded, api, (message) =>
      problems.push(problemInText(configText(), loaded.file, ['apis', apiIndex, 'definition'], message)),
    );
    if (xmlSchemas) xmlSchemaSets.push({ keys: ['apis', apiIndex, 'definition'], set: xmlSchemas });
    const apiDocument = compile(['apis', apiIndex, 'policy'], api.policy, 'api');
    problems.push(...graphqlElementsOutside(apiDocument, api));
    // A WebSocket API is checked here, and inherits the global and product documents without what its handshake
    // cannot run; any other API inherits them as they are.
    const inherited = inheritance(api, apiIndex, apiDocument, problems, withoutSkipped, (keys, message) =>
      problemInText(configText(), loaded.file, keys, message),
    );
    const pipeline = (docs: ScopeDocuments) => pipelineOfType(api, build(docs));
    const global = inherited(globalDocument);
    const inheritedProducts = new Map(products.map((p) => [p.id, inherited(productDocuments.get(p.id))]));
    // One pipeline without a product (a call with no key, or a key for the API or all APIs) and one per product
    // containing the API: which one runs is decided per request, by the subscription.
    const perProduct = (build: (product: CompiledDocument | undefined) => Pipeline) =>
      new Map(products.map((product) => [product.id, build(inheritedProducts.get(product.id))]));
    return {
      id: api.id,
      name: api.name ?? api.id,
      urlSuffix: api.urlSuffix,
      serviceUrl: api.serviceUrl,
      // An MCP server API is served as HTTP (its endpoint's operations); the others as they are declared.
      type: api.type === 'mcp' ? ('http' as const) : api.type,
      hostnames: api.hostnames ?? [],
      version: apiVersionSelector(config, api),
      productIds: products.map((p) => p.id),
      access: {
        subscriptionRequired: api.subscriptionRequired,
        keyHeader: api.subscriptionKeyNames.header,
        keyQuery: api.subscriptionKeyNames.query,
        openProductId: products.find((product) => !product.subscriptionRequired)?.id,
      },
      apiPipeline: pipeline(defined({ global, api: apiDocument })),
      productApiPipelines: perProduct((product) => pipeline(defined({ global, product, api: apiDocument }))),
      operations: (api.type === 'graphql' ? graphqlOperations : operationsOf(api)).map(
        (operation, operationIndex) => {
          const operationDocument = compile(
            ['apis', apiIndex, 'operations', operationIndex, 'policy'],
            operation.policy,
            'operation',
          );
          if (api.type === 'websocket') problems.push(...refusedOnHandshake(operationDocument, api.id));
          return {
            id: operation.id ?? `${operation.method} ${operation.urlTemplate}`,
            method: operation.method,
            urlTemplate: operation.urlTemplate,
            soap: operation.soap,
            responses: operation.responses,
            definition: {
              templateParameters: operation.templateParameters,
              queryParameters: operation.queryParameters,
              headerParameters: operation.headerParameters,
              requestContent: operation.requestContent,
              requestBody: operation.requestBody,
              requestContentType: operation.requestContentType,
              responses: operation.responses,
              graphql: graphql.get(api.id),
              ...(xmlSchemas ? { xmlSchemas } : {}),
              ...(operation.soap ? { soap: operation.soap } : {}),
            },
            pipeline: pipeline(defined({ global, api: apiDocument, operation: operationDocument })),
            productPipelines: perProduct((product) =>
              pipeline(defined({ global, product, api: apiDocument, operation: operationDocument })),
            ),
          };
        },
      ),
    };
  });

  let catalog: Catalog<Pipeline> | undefined;
  try {
    catalog = new Catalog(apis);
  } catch (error) {
    if (error instanceof UrlTemplateError) problems.push({ file: loaded.file, message: error.message });
    else throw error;
  }
  if (problems.length > 0 || !catalog) throw new GatewayLoadError(problems);
  return {
    config,
    catalog,
    backends: singleBackendUrls(config.backends),
    backendEntities: resolvedBackends,
    policyDocuments: policies.documents(),
    xmlSchemaSets,
    certificatesUsed: policies.certificatesUsed,
  };
}

/**
 * The policy documents of a configuration, read and compiled for the gateway: `compile` reads one (counted in
 * `documents`) and compiles it for its scope; `withoutSkipped` compiles one again without the elements a WebSocket
 * API's handshake skips (once per document). Problems go to `problems`; `configProblem` places one in the
 * configuration file.
 */
function policyCompiler(
  loaded: LoadedConfig,
  problems: Diagnostic[],
  namedValues: NamedValues,
  configProblem: (keys: (string | number)[], message: string) => Diagnostic,
) {
  const { config } = loaded;
  let policyDocuments = 0;
  const source = (keys: (string | number)[], value: string): { file: string; text: string } | undefined => {
    const { file, text } = policySource(loaded, keys, value);
    if (text === undefined) {
      problems.push(configProblem(keys, `policy file "${value}" not found (looked at ${file})`));
      return undefined;
    }
    policyDocuments += 1;
    return { file, text };
  };
  const certificateIds = new Set(Object.keys(config.tls?.certificates ?? {}));
  const certificatesUsed = { ids: new Set<string>(), all: false };
  const usesCertificate = (id: string | undefined) => {
    if (id === undefined) certificatesUsed.all = true;
    else certificatesUsed.ids.add(id);
  };
  const registry = schemaRegistry(loaded, (keys, message) => problems.push(configProblem(keys, message)));
  const fragments = new Map<string, PolicyDocument>();
  for (const [id, value] of Object.entries(config.fragments)) {
    const input = source(['fragments', id], value);
    const document = input && read(input, namedValues, problems);
    if (document) fragments.set(id, document);
  }
  const options = (scope: Scope): CompileOptions => ({
    scope,
    fragments: (id) => fragments.get(id),
    certificateIds,
    usesCertificate,
    schemas: registry.json,
    xmlSchemas: registry.xml,
  });
  const compileRead = (document: PolicyDocument, options: CompileOptions): CompiledDocument | undefined => {
    try {
      return compilePolicyDocument(document, options);
    } catch (error) {
      if (error instanceof PolicyLoadError) problems.push(...error.diagnostics);
      else throw error;
      return undefined;
    }
  };
  const sources = new WeakMap<CompiledDocument, PolicyDocument>();
  const handshakeVariants = new Map<CompiledDocument, CompiledDocument | undefined>();
  return {
    registry,
    certificatesUsed: certificatesUsed as CertificatesUsed,
    documents: () => policyDocuments,
    compile(
      keys: (string | number)[],
      value: string | undefined,
      scope: Scope,
    ): CompiledDocument | undefined {
      if (value === undefined) return undefined;
      const input = source(keys, value);
      const document = input && read(input, namedValues, problems);
      const compiled = document && compileRead(document, options(scope));
      if (document && compiled) sources.set(compiled, document);
      return compiled;
    },
    withoutSkipped(compiled: CompiledDocument): CompiledDocument | undefined {
      if (!handshakeVariants.has(compiled)) {
        const variant = { ...options(compiled.scope), skipElements: unsupportedOnHandshake };
        handshakeVariants.set(compiled, compileRead(sources.get(compiled)!, variant));
      }
      return handshakeVariants.get(compiled);
    },
  };
}

/**
 * The named values policies substitute: literal ones as written, environment ones read now. An unset variable is
 * the operator's to fill (the Key Vault secret or key API Management's extract did not carry), reported by name.
 */
export function namedValueTable(
  config: GatewayConfig,
  problem: (keys: (string | number)[], message: string) => void,
): NamedValues {
  const table = new Map<string, { value: string; secret?: boolean }>();
  for (const [name, entry] of Object.entries(config.namedValues)) {
    if (typeof entry === 'string') table.set(name, { value: entry });
    else if ('value' in entry) table.set(name, { value: entry.value, secret: entry.secret });
    else {
      const value = process.env[entry.env];
      const origin = entry.keyVault
        ? ` (API Management read it from Key Vault: ${entry.keyVault.secretIdentifier})`
        : '';
      if (value === undefined)
        problem(['namedValues', name, 'env'], `environment variable ${entry.env} is not set${origin}`);
      // Defined even when unset, so the policies that use it do not each report it again: the load fails anyway.
      table.set(name, { value: value ?? '', secret: entry.secret });
    }
  }
  return table;
}

function read(input: { file: string; text: string }, namedValues: NamedValues, problems: Diagnostic[]) {
  try {
    return readPolicyDocument(input.text, { file: input.file, namedValues });
  } catch (error) {
    if (error instanceof PolicyLoadError) {
      problems.push(...error.diagnostics);
      return undefined;
    }
    throw error;
  }
}

function defined<T extends object>(record: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as never;
}

/**
 * Every problem `up` would refuse a gateway file for — its schema and cross-section checks, and every policy it names
 * compiled as the engine would at start — formatted `file:line:col: path: message`; empty when it would start.
 */
export async function gatewayFileProblems(file: string): Promise<string[]> {
  return (await checkGatewayFile(file)).problems;
}

/** gatewayFileProblems, and when there are none, how many policy documents the file names (all checked). */
export async function checkGatewayFile(
  file: string,
): Promise<{ readonly problems: string[]; readonly policyDocuments: number }> {
  try {
    const compiled = compileGateway(await loadConfigFile(file));
    // XML schemas compile with libxml2, which loads asynchronously: checked here (the engine reports a schema that
    // does not compile when a request needs it, as the documented "could not be resolved").
    const problems: string[] = [];
    for (const { keys, set } of compiled.xmlSchemaSets) {
      const problem = await xmlSchemaProblem(set);
      if (problem !== undefined)
        problems.push(
          formatDiagnostic(
            problemInText(
              readFileSync(file, 'utf8'),
              file,
              keys,
              `the XML schema does not compile: ${problem}`,
            ),
          ),
        );
    }
    return { problems, policyDocuments: compiled.policyDocuments };
  } catch (error) {
    if (error instanceof ConfigError || error instanceof GatewayLoadError)
      return { problems: error.problems.map(formatDiagnostic), policyDocuments: 0 };
    throw error;
  }
}
