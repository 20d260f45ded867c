import path from 'node:path';
import {
  ImportError,
  type ImportedOperation,
  ImportRefusedError,
  importDefinition,
} from '../../importers/index.js';
import { type ArtifactFolder, configId, isRecord, reportUnused } from '../artifacts.js';
import { type ImportContext, informationFile, type ResourceKind } from '../context.js';
import type { ApiEntry, OperationEntry } from '../model.js';
import { generatedSpecification } from '../specification.js';
import { graphqlSchemaOf } from './graphql-schema.js';

/** Why the parts of an API Portcullis has no place for are not carried over. */
const reasons: Record<string, string> = {
  protocols: "the gateway's listeners decide http and https",
  authenticationSettings: 'OAuth 2.0 / OpenID Connect settings of the developer portal are not used',
  apiRevisionDescription: 'revision notes are not kept',
  apiVersionDescription: 'version notes are not kept',
  termsOfServiceUrl: 'developer-portal terms are not kept',
  contact: 'developer-portal contact details are not kept',
  license: 'developer-portal license details are not kept',
  format: 'the specification file is read instead',
  value: 'the specification file is read instead',
  sourceApiId: 'the API this one was cloned from is not tracked',
  apiType: 'only HTTP, SOAP, WebSocket, GraphQL and MCP pass-through APIs are served',
  backendId: 'an API bound to a backend by id is not supported: set serviceUrl',
};

const used = [
  'path',
  'serviceUrl',
  'displayName',
  'description',
  'type',
  'subscriptionRequired',
  'subscriptionKeyParameterNames',
  'apiRevision',
  'isCurrent',
  'apiVersion',
  'apiVersionSetId',
  'isOnline',
];

const formats: Record<string, 'openapi' | 'wsdl' | 'wadl'> = {
  '.yaml': 'openapi',
  '.yml': 'openapi',
  '.json': 'openapi',
  '.wsdl': 'wsdl',
  '.wadl': 'wadl',
};

/** API folders by API name: `echo-api` and its other revisions `echo-api;rev=2`. */
function revisionsByApi(artifacts: ArtifactFolder): Map<string, string[]> {
  const byApi = new Map<string, string[]>();
  for (const folder of artifacts.children('apis')) {
    const name = folder.split(';rev=')[0]!;
    byApi.set(name, [...(byApi.get(name) ?? []), folder]);
  }
  return byApi;
}

/** The revision API Management serves: the one marked current, else the folder without `;rev=` (which always is). */
function currentRevision(
  artifacts: ArtifactFolder,
  name: string,
  folders: readonly string[],
): string | undefined {
  const marked = folders.find(
    (folder) => artifacts.properties(`apis/${folder}/apiInformation.json`, 'apis', folder).isCurrent === true,
  );
  const served = marked ?? folders.find((folder) => folder === name);
  for (const folder of folders) {
    if (folder !== served) {
      artifacts.skip(
        `apis/${folder}`,
        `revision ${folder.split(';rev=')[1] ?? '1'} is not the current one: only the current revision is served`,
      );
    }
  }
  return served;
}

/** Leaves out what the schema defaults anyway (empty lists, `required: false`), so the entry reads well. */
function operationEntry(operation: ImportedOperation, policy: string): OperationEntry {
  const entry: OperationEntry = {
    id: operation.id,
    method: operation.method,
    urlTemplate: operation.urlTemplate,
  };
  for (const [key, value] of Object.entries(operation)) {
    if (key in entry || value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    entry[key] =
      key === 'templateParameters' || key === 'queryParameters' || key === 'headerParameters'
        ? (value as { required: boolean }[]).map(({ required, ...rest }) =>
            required ? { ...rest, required } : rest,
          )
        : value;
  }
  return { ...entry, policy };
}

/**
 * The URL suffix: API Management appends the version of a path-versioned (Segment) API to its path; the versions of
 * a header- or query-versioned set share the path as it is.
 */
function urlSuffixOf(
  context: ImportContext,
  file: string,
  properties: Record<string, unknown>,
  version: { set: string; name: string } | undefined,
): string | undefined {
  const base = typeof properties.path === 'string' ? properties.path.replace(/^\/+|\/+$/g, '') : '';
  const segment = version !== undefined && schemeOf(context, version.set) === 'path' ? version.name : '';
  const suffix =
    segment === '' || base === segment || base.endsWith(`/${segment}`) ? base : `${base}/${segment}`;
  if (!/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/.test(suffix)) {
    context.artifacts.skip(
      file,
      `path "${base}": an API needs a URL suffix of path segments (the root is not served); left out`,
    );
    return undefined;
  }
  return suffix;
}

function schemeOf(context: ImportContext, set: string): 'path' | 'header' | 'query' {
  return context.document.versionSets.find((entry) => entry.id === set)?.scheme ?? 'path';
}

/** The version set the API belongs to, when that set was carried over (its own finding says why not). */
function versionOf(
  context: ImportContext,
  file: string,
  properties: Record<string, unknown>,
): { set: string; name: string } | undefined | 'unserved' {
  if (typeof properties.apiVersionSetId !== 'string') return undefined;
  const set = properties.apiVersionSetId.split('/').at(-1)!;
  if (!context.document.versionSets.some((entry) => entry.id === set)) {
    context.artifacts.skip(
      file,
      `apiVersionSetId ${properties.apiVersionSetId}: the version set is not among the sets carried over; the API is left out`,
    );
    return 'unserved';
  }
  return { set, name: typeof properties.apiVersion === 'string' ? properties.apiVersion : '' };
}

/** What every imported API carries whatever its type: its id, names, subscription setting and key names. */
function apiEntryBase(id: string, properties: Record<string, unknown>) {
  return {
    id,
    ...(typeof properties.displayName === 'string' ? { name: properties.displayName } : {}),
    ...(typeof properties.description === 'string' && properties.description !== ''
      ? { description: properties.description }
      : {}),
    // API Management's default: an API needs a subscription unless it says otherwise.
    subscriptionRequired: properties.subscriptionRequired !== false,
    ...subscriptionKeyNames(properties),
  };
}

async function importApi(context: ImportContext, name: string, folder: string): Promise<void> {
  const { artifacts, document, output } = context;
  const file = `apis/${folder}/apiInformation.json`;
  const properties = artifacts.properties(file, 'apis', name);
  const type = typeof properties.type === 'string' ? properties.type : 'http';
  if (type === 'mcp') return importMcpServer(context, name, folder, properties);
  reportUnused(artifacts, file, properties, used, reasons);
  if (type !== 'http' && type !== 'soap' && type !== 'websocket' && type !== 'graphql') {
    artifacts.skip(
      file,
      `type ${type}: only HTTP, SOAP, WebSocket, GraphQL and MCP pass-through APIs are served; the API is left out`,
    );
    return;
  }
  if (type === 'graphql' && artifacts.children(`apis/${folder}/resolvers`).length > 0) {
    artifacts.skip(
      `apis/${folder}/resolvers`,
      'a synthetic GraphQL API (fields resolved by policies: http-data-source, set-graphql-resolver) is not served; the API is left out',
    );
    return;
  }
  // A WebSocket API names its backend by its ws(s) URL; Envoy reaches it over http(s) and upgrades the connection.
  const written = typeof properties.serviceUrl === 'string' ? properties.serviceUrl : undefined;
  const serviceUrl = (
    type === 'websocket' ? written?.replace(/^ws(s?):\/\//i, 'http$1://') : written
  )?.replace(/\/+$/, '');
  if (serviceUrl === undefined || !/^https?:\/\//.test(serviceUrl)) {
    artifacts.skip(
      file,
      `serviceUrl: a Portcullis API needs an http(s) service URL, got ${JSON.stringify(serviceUrl ?? null)}; the API is left out`,
    );
    return;
  }
  const version = versionOf(context, file, properties);
  if (version === 'unserved') return;
  const urlSuffix = urlSuffixOf(context, file, properties, version);
  if (urlSuffix === undefined) return;
  const id = configId(artifacts, `apis/${folder}`, name);
  const api: ApiEntry = {
    ...apiEntryBase(id, properties),
    ...(type === 'soap' || type === 'websocket' || type === 'graphql' ? { type } : {}),
    urlSuffix,
    serviceUrl,
    ...(version ? { version } : {}),
  };
  // A WebSocket API has no specification: its one operation is the system's onHandshake (GET /). A GraphQL API's
  // specification is its schema; it has no operations of its own.
  const operations =
    type === 'websocket'
      ? [onHandshake]
      : type === 'graphql'
        ? graphqlSchemaOf(context, folder, api)
        : await importSpecification(context, folder, api);
  if (operations === undefined) return;
  const policy = artifacts.text(`apis/${folder}/policy.xml`);
  if (policy !== undefined) {
    output.set(`policies/apis/${id}.xml`, policy);
    api.policy = `policies/apis/${id}.xml`;
  }
  const withPolicies = operationPolicies(context, folder, id, operations);
  if (withPolicies.length > 0) api.operations = withPolicies;
  reportOtherContent(artifacts, folder);
  document.apis.push(api);
  context.apiIds.set(name, id);
}

/**
 * An API of type mcp (API Management REST API 2025-09-01-preview: "expose an existing MCP server"): a pass-through
 * MCP server names its backend by `serviceUrl` or `backendId`, its transport in `mcpProperties.transportType` and the
 * server's endpoint path in `mcpProperties.endpoints`; it becomes a Portcullis MCP API whose `serviceUrl` is that
 * endpoint, served at `/<path>/mcp` as API Management serves it, with its API policy. An MCP server API Management
 * makes from a REST API's operations (no backend; its tools name operations) is not carried: Portcullis serves every
 * API's operations as tools at `/v1/mcp` already. Neither is a server reached over the old HTTP+SSE transport.
 */
function importMcpServer(
  context: ImportContext,
  name: string,
  folder: string,
  properties: Record<string, unknown>,
): void {
  const { artifacts, document, output } = context;
  const file = `apis/${folder}/apiInformation.json`;
  const { backendId: _, ...otherReasons } = reasons;
  reportUnused(artifacts, file, properties, [...used, 'backendId', 'mcpProperties'], otherReasons);
  const mcp = isRecord(properties.mcpProperties) ? properties.mcpProperties : {};
  const transport = typeof mcp.transportType === 'string' ? mcp.transportType : 'streamable';
  if (!/^streamable(-?http)?$/i.test(transport)) {
    artifacts.skip(
      file,
      `mcpProperties.transportType ${transport}: Portcullis reaches MCP servers over Streamable HTTP only (not the HTTP+SSE transport of 2024-11-05); the API is left out`,
    );
    return;
  }
  const backend =
    typeof properties.backendId === 'string'
      ? document.backends.find((entry) => entry.id === String(properties.backendId).split('/').at(-1))
      : undefined;
  const base = typeof properties.serviceUrl === 'string' ? properties.serviceUrl : backend?.url;
  if (base === undefined) {
    artifacts.skip(
      file,
      typeof properties.backendId === 'string'
        ? `backendId ${properties.backendId}: the backend is not among those carried over (or has no url); the MCP server is left out`
        : "an MCP server made from a REST API's operations: Portcullis serves every API's operations as tools at /v1/mcp; left out",
    );
    return;
  }
  const endpoint = mcpEndpointPath(mcp.endpoints);
  const serviceUrl = `${base.replace(/\/+$/, '')}${endpoint === '/' ? '' : endpoint}`;
  if (!/^https?:\/\//.test(serviceUrl)) {
    artifacts.skip(
      file,
      `serviceUrl: an MCP server needs an http(s) URL, got ${JSON.stringify(serviceUrl)}; left out`,
    );
    return;
  }
  const urlSuffix = urlSuffixOf(context, file, properties, undefined);
  if (urlSuffix === undefined) return;
  const id = configId(artifacts, `apis/${folder}`, name);
  const api: ApiEntry = { ...apiEntryBase(id, properties), type: 'mcp', urlSuffix, serviceUrl };
  const policy = artifacts.text(`apis/${folder}/policy.xml`);
  if (policy !== undefined) {
    output.set(`policies/apis/${id}.xml`, policy);
    api.policy = `policies/apis/${id}.xml`;
  }
  reportOtherContent(artifacts, folder);
  document.apis.push(api);
  context.apiIds.set(name, id);
}

/**
 * The server's MCP endpoint path from `mcpProperties.endpoints`, written either as an object by name
 * (`{"mcp": {"uriTemplate": "/mcp"}}`) or as a list (`[{"name": "mcp", "uriTemplate": "/mcp"}]`); the Streamable
 * HTTP one is named `mcp` or `message`. None: the backend URL is the endpoint.
 */
function mcpEndpointPath(endpoints: unknown): string {
  const entries = Array.isArray(endpoints)
    ? endpoints.filter(isRecord).map((entry) => [String(entry.name ?? ''), entry] as const)
    : isRecord(endpoints)
      ? Object.entries(endpoints).flatMap(([key, entry]) => (isRecord(entry) ? [[key, entry] as const] : []))
      : [];
  const chosen = entries.find(([key]) => key === 'mcp') ?? entries.find(([key]) => key === 'message');
  const template = chosen?.[1].uriTemplate;
  return typeof template === 'string' && template.startsWith('/') ? template : '/';
}

function subscriptionKeyNames(properties: Record<string, unknown>): Pick<ApiEntry, 'subscriptionKeyNames'> {
  const names = properties.subscriptionKeyParameterNames;
  if (!isRecord(names)) return {};
  const header =
    typeof names.header === 'string' && names.header !== 'Ocp-Apim-Subscription-Key'
      ? names.header
      : undefined;
  const query =
    typeof names.query === 'string' && names.query !== 'subscription-key' ? names.query : undefined;
  if (header === undefined && query === undefined) return {};
  return { subscriptionKeyNames: { ...(header ? { header } : {}), ...(query ? { query } : {}) } };
}

/** API Management's onHandshake operation of every WebSocket API, whose policy is the handshake's. */
const onHandshake: ImportedOperation = {
  id: 'onHandshake',
  method: 'GET',
  urlTemplate: '/',
  templateParameters: [],
  queryParameters: [],
  headerParameters: [],
  responses: [],
};

/**
 * The specification, copied beside the configuration as the API's `definition` and read by the importer of its
 * format: its operations (or undefined when it cannot be read, the API then left out, said why).
 */
async function importSpecification(
  context: ImportContext,
  folder: string,
  api: ApiEntry,
): Promise<ImportedOperation[] | undefined> {
  const { artifacts, output } = context;
  const specification = artifacts.files(`apis/${folder}`).find((file) => file.startsWith('specification.'));
  if (specification === undefined) {
    artifacts.skip(
      `apis/${folder}`,
      'no specification: the API is served without operations (every call is a 404)',
    );
    return [];
  }
  const extension = path.extname(specification).toLowerCase();
  const format = formats[extension];
  if (format === undefined) {
    artifacts.skip(
      `apis/${folder}/${specification}`,
      `a ${extension} specification cannot be imported; the API is left out`,
    );
    return undefined;
  }
  try {
    const imported = await importDefinition(format, artifacts.absolute(`apis/${folder}/${specification}`), {
      urlSuffix: api.urlSuffix,
      apiId: api.id,
      serviceUrl: api.serviceUrl,
      // The folder is someone else's: its specifications may refer only to files inside it.
      root: artifacts.root,
    });
    const file = `definitions/${api.id}${extension === '.yml' ? '.yaml' : extension}`;
    output.set(file, artifacts.text(`apis/${folder}/${specification}`)!);
    api.definition = { format, file };
    return imported.operations;
  } catch (error) {
    // A reference out of the folder or an alias bomb stops the import (once every API is read, so all are named):
    // it is not a specification to leave out.
    if (error instanceof ImportRefusedError) {
      artifacts.refused.push(...error.problems);
      return undefined;
    }
    if (!(error instanceof ImportError)) throw error;
    artifacts.skip(
      `apis/${folder}/${specification}`,
      `cannot be imported (${error.message}); the API is left out`,
    );
    return undefined;
  }
}

/** `operations/<name>/policy.xml` for the operations of the specification with that name. */
function operationPolicies(
  context: ImportContext,
  folder: string,
  apiId: string,
  operations: readonly ImportedOperation[],
): OperationEntry[] {
  const entries: OperationEntry[] = [];
  for (const name of context.artifacts.children(`apis/${folder}/operations`)) {
    const policy = context.artifacts.text(`apis/${folder}/operations/${name}/policy.xml`);
    if (policy === undefined) continue;
    const operation = operations.find((candidate) => candidate.id === name);
    if (operation === undefined) {
      context.artifacts.skip(
        `apis/${folder}/operations/${name}/policy.xml`,
        `no operation "${name}" in the specification: its policy has no operation to run on`,
      );
      continue;
    }
    const file = `policies/apis/${apiId}/${name}.xml`;
    context.output.set(file, policy);
    entries.push(operationEntry(operation, file));
  }
  return entries;
}

const carried = new Set(['apiInformation.json', 'policy.xml', 'operations', 'schema.graphql']);

/** Diagnostics, tags, schemas, releases, wikis, resolvers…: named, with why they are not carried over. */
function reportOtherContent(artifacts: ArtifactFolder, folder: string): void {
  const why: Record<string, string> = {
    diagnostics:
      'API diagnostics (Application Insights, Azure Monitor) are not supported: see the engine metrics and access log',
    tags: 'tags are not kept',
    schemas:
      "API schemas are not kept (the specification carries its own; a GraphQL API's is its specification.graphql)",
    releases: 'release notes are not kept',
    wikis: 'developer-portal wikis are not kept',
    resolvers: 'GraphQL resolvers (synthetic GraphQL) are not supported',
    tagDescriptions: 'tag descriptions are not kept',
  };
  for (const entry of [...artifacts.children(`apis/${folder}`), ...artifacts.files(`apis/${folder}`)]) {
    if (carried.has(entry) || entry.startsWith('specification.')) continue;
    artifacts.skip(`apis/${folder}/${entry}`, why[entry] ?? 'not supported by Portcullis');
  }
}

/** `apis/<name>/`: the API's information, specification, policy and operation policies. */
export const apis: ResourceKind = {
  name: 'apis',
  async importInto(context) {
    for (const [name, folders] of revisionsByApi(context.artifacts)) {
      const folder = currentRevision(context.artifacts, name, folders);
      if (folder === undefined) {
        context.artifacts.skip(
          `apis/${name}`,
          'no current revision among the artifacts: the API is left out',
        );
        continue;
      }
      await importApi(context, name, folder);
    }
  },
  exportFrom(context) {
    for (const api of context.config.apis) exportApi(context, api);
  },
};

const definitionExtensions: Record<string, string> = { wsdl: '.wsdl', wadl: '.wadl' };

function exportApi(context: Parameters<ResourceKind['exportFrom']>[0], api: ApiEntry): void {
  if (api.type === 'mcp') {
    exportMcpServer(context, api);
    return;
  }
  const { output, findings } = context;
  const folder = `apis/${api.id}`;
  const version = api.version;
  // API Management appends a Segment version to the path itself; header and query versions share the path.
  const scheme = context.config.versionSets.find((set) => set.id === version?.set)?.scheme ?? 'path';
  const pathOf =
    version && scheme === 'path' && version.name !== '' && api.urlSuffix.endsWith(`/${version.name}`)
      ? api.urlSuffix.slice(0, -version.name.length - 1)
      : api.urlSuffix;
  const keyNames = api.subscriptionKeyNames;
  output.set(
    `${folder}/apiInformation.json`,
    informationFile({
      path: pathOf,
      apiRevision: '1',
      isCurrent: true,
      displayName: api.name ?? api.id,
      description: api.description,
      type: api.type === 'soap' || api.type === 'websocket' || api.type === 'graphql' ? api.type : undefined,
      // API Management names a WebSocket API's backend by its ws(s) URL and serves it over wss.
      protocols: api.type === 'websocket' ? ['wss'] : ['https'],
      serviceUrl: api.type === 'websocket' ? api.serviceUrl.replace(/^http/, 'ws') : api.serviceUrl,
      subscriptionRequired: api.subscriptionRequired ?? false,
      subscriptionKeyParameterNames:
        keyNames && (keyNames.header !== undefined || keyNames.query !== undefined)
          ? {
              header: keyNames.header ?? 'Ocp-Apim-Subscription-Key',
              query: keyNames.query ?? 'subscription-key',
            }
          : undefined,
      apiVersion: version?.name,
      apiVersionSetId: version ? `/apiVersionSets/${version.set}` : undefined,
    }),
  );
  if (api.hostnames) {
    findings.push({
      file: `${folder}/apiInformation.json`,
      kind: 'skipped',
      message: 'hostnames: API Management has no per-API host names',
    });
  }
  if (api.graphql) {
    // API Management's extractor writes a GraphQL API's schema (its ApiSchema resource) as specification.graphql.
    output.set(`${folder}/specification.graphql`, context.fileText(api.graphql.schema));
  } else if (api.definition) {
    const extension =
      definitionExtensions[api.definition.format] ??
      (path.extname(api.definition.file).toLowerCase() === '.json' ? '.json' : '.yaml');
    output.set(`${folder}/specification${extension}`, context.fileText(api.definition.file));
  } else if (api.type !== 'websocket' && api.type !== 'graphql' && (api.operations ?? []).length > 0) {
    // A WebSocket API has no specification in API Management: its one operation, onHandshake, is the system's.
    output.set(`${folder}/specification.yaml`, generatedSpecification(api));
  }
  if (api.policy !== undefined) output.set(`${folder}/policy.xml`, context.policyText(api.policy));
  for (const operation of api.operations ?? []) {
    if (operation.policy === undefined) continue;
    if (operation.id === undefined) {
      findings.push({
        file: `${folder}/operations`,
        kind: 'skipped',
        message: `${operation.method} ${operation.urlTemplate}: an operation without an id has no folder for its policy`,
      });
      continue;
    }
    output.set(`${folder}/operations/${operation.id}/policy.xml`, context.policyText(operation.policy));
  }
}

/**
 * An MCP server API as API Management describes an existing one (importMcpServer's inverse): type mcp, the server's
 * base URL as `serviceUrl` and its endpoint path, the service URL's last segment, as the `mcp` endpoint of
 * `mcpProperties` over Streamable HTTP; its API policy. The tool rules (`mcp.tools`, `writeTools`, `toolPrefix`) are
 * Portcullis's own: API Management has no property for them.
 */
function exportMcpServer(context: Parameters<ResourceKind['exportFrom']>[0], api: ApiEntry): void {
  const { output, findings } = context;
  const folder = `apis/${api.id}`;
  const { base, endpoint } = mcpEndpointOf(api.serviceUrl);
  output.set(
    `${folder}/apiInformation.json`,
    informationFile({
      path: api.urlSuffix,
      apiRevision: '1',
      isCurrent: true,
      displayName: api.name ?? api.id,
      description: api.description,
      type: 'mcp',
      protocols: ['https'],
      serviceUrl: base,
      subscriptionRequired: api.subscriptionRequired ?? false,
      mcpProperties: {
        transportType: 'streamable',
        ...(endpoint ? { endpoints: { mcp: { uriTemplate: endpoint } } } : {}),
      },
    }),
  );
  for (const key of Object.keys(api.mcp ?? {}))
    findings.push({
      file: `${folder}/apiInformation.json`,
      kind: 'skipped',
      message: `mcp.${key}: API Management's MCP server has no such property; set it again after an import`,
    });
  for (const [key, message] of [
    ['hostnames', 'hostnames: API Management has no per-API host names'],
    ['version', 'version: an MCP server API is not versioned in API Management'],
    ['subscriptionKeyNames', 'subscriptionKeyNames: not written for an MCP server API'],
  ] as const)
    if (api[key] !== undefined)
      findings.push({ file: `${folder}/apiInformation.json`, kind: 'skipped', message });
  if (api.policy !== undefined) output.set(`${folder}/policy.xml`, context.policyText(api.policy));
  for (const operation of api.operations ?? [])
    if (operation.policy !== undefined)
      findings.push({
        file: `${folder}/operations`,
        kind: 'skipped',
        message: `${operation.method} ${operation.urlTemplate}: an MCP server API has no operations in API Management; policy not written`,
      });
}

/**
 * A server's URL as API Management's base URL and endpoint path: `https://h/a/mcp` → `https://h/a` and `/mcp`. A URL
 * without a path (or with a query) is the base itself, with no endpoint.
 */
function mcpEndpointOf(serviceUrl: string): { base: string; endpoint?: string } {
  if (!URL.canParse(serviceUrl)) return { base: serviceUrl };
  const url = new URL(serviceUrl);
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  if (url.search !== '' || url.hash !== '' || segments.length === 0) return { base: serviceUrl };
  const last = segments.pop()!;
  return { base: `${url.origin}${segments.map((s) => `/${s}`).join('')}`, endpoint: `/${last}` };
}
