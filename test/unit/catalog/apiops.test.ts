import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiopsError, exportApiops, importApiops } from '../../../src/catalog/apiops/index.js';
import { emptyDocument } from '../../../src/catalog/apiops/model.js';

const sample = fileURLToPath(new URL('../../fixtures/apiops/sample-artifacts', import.meta.url));
const headerQueryVersions = fileURLToPath(
  new URL('../../fixtures/apiops/header-query-versions', import.meta.url),
);
const prodOverrides = fileURLToPath(
  new URL('../../fixtures/apiops/configuration.prod.yaml', import.meta.url),
);

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A copy of the sample artifacts with `files` (relative path → text) written over it. */
function artifacts(files: Record<string, string> = {}): string {
  const root = mkdtempSync(path.join(tmpdir(), 'portcullis-apiops-'));
  folders.push(root);
  cpSync(sample, root, { recursive: true });
  for (const [relative, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    writeFileSync(path.join(root, relative), text);
  }
  return root;
}

const information = (properties: Record<string, unknown>) => JSON.stringify({ properties });
const messagesFor = (findings: readonly { file: string; message: string }[], file: string) =>
  findings.filter((finding) => finding.file === file).map((finding) => finding.message);

describe('import apiops: the Azure/apiops sample artifacts', () => {
  it('carries over the APIs it can serve, with their specifications, suffixes and policies', async () => {
    const { document, files } = await importApiops(sample);
    expect(document.apis.map((api) => [api.id, api.urlSuffix, api.definition?.format])).toEqual([
      ['basic-api', 'basic-api', 'openapi'],
      ['graphql-api', 'graphql-api', undefined],
      ['revisioned-api', 'revisioned-api', 'openapi'],
      ['soap-api', 'soap-api', undefined],
      ['versioned-api-v1', 'versioned-api/v1', 'openapi'],
      ['versioned-api-v2', 'versioned-api/v2', 'openapi'],
      ['wadl-api', 'wadl-api', 'wadl'],
    ]);
    const basic = document.apis[0]!;
    expect(basic).toMatchObject({ serviceUrl: 'https://httpbin.org', subscriptionRequired: true });
    expect(
      basic.operations?.map((operation) => [operation.id, operation.method, operation.urlTemplate]),
    ).toEqual([
      ['create-item', 'POST', '/items'],
      ['get-items', 'GET', '/items'],
    ]);
    expect(files.get(basic.operations![1]!.policy!)).toContain('<value>get-items</value>');
    expect(files.get(basic.policy!)).toContain('backend-id="backend1"');
    expect(files.get(document.policy!)).toContain('<include-fragment fragment-id="policyFragment1" />');
    expect(Object.keys(document.fragments)).toEqual(['policyFragment1', 'policyFragment2']);
  });

  it('serves the current revision only and says so for the others', async () => {
    const { document, findings } = await importApiops(sample);
    const revisioned = document.apis.find((api) => api.id === 'revisioned-api')!;
    expect(revisioned.operations?.map((operation) => operation.id)).toEqual(['get-revision']);
    expect(messagesFor(findings, 'apis/revisioned-api;rev=2')).toEqual([
      'revision 2 is not the current one: only the current revision is served',
    ]);
  });

  it('keeps a path-versioned set, and products with their APIs and policies', async () => {
    const { document } = await importApiops(sample);
    expect(document.versionSets).toEqual([
      {
        id: 'versionSet1',
        name: 'versionSet1',
        description: 'Version set used by versioned-api-v1 and versioned-api-v2.',
      },
    ]);
    expect(document.apis.find((api) => api.id === 'versioned-api-v2')!.version).toEqual({
      set: 'versionSet1',
      name: 'v2',
    });
    expect(
      document.products.map((product) => [product.id, product.subscriptionRequired, product.apis]),
    ).toEqual([
      ['product1', true, ['basic-api', 'revisioned-api', 'versioned-api-v1']],
      ['product2', false, ['graphql-api', 'soap-api', 'versioned-api-v2', 'wadl-api']],
    ]);
    expect(document.backends).toEqual([
      { id: 'backend1', description: 'HTTPBin backend for scenario APIs.', url: 'https://httpbin.org' },
      {
        id: 'backend2',
        description: 'Postman Echo backend for scenario APIs.',
        url: 'https://postman-echo.com',
      },
    ]);
    expect(document.namedValues['environment-name']).toBe('scenario');
  });

  it('carries a WebSocket API: its ws(s) backend reached over http(s), the onHandshake policy on its operation', async () => {
    const root = artifacts({
      'apis/chat-api/apiInformation.json': information({
        displayName: 'Chat',
        path: 'chat',
        type: 'websocket',
        protocols: ['wss'],
        serviceUrl: 'wss://chat.example/socket',
        subscriptionRequired: true,
      }),
      'apis/chat-api/operations/onHandshake/policy.xml': '<policies><inbound><base /></inbound></policies>',
    });
    const { document, files, findings } = await importApiops(root);
    const chat = document.apis.find((api) => api.urlSuffix === 'chat')!;
    expect(chat).toMatchObject({ type: 'websocket', serviceUrl: 'https://chat.example/socket' });
    expect(chat.definition).toBeUndefined();
    expect(chat.operations).toEqual([
      {
        id: 'onHandshake',
        method: 'GET',
        urlTemplate: '/',
        policy: `policies/apis/${chat.id}/onHandshake.xml`,
      },
    ]);
    expect(files.get(`policies/apis/${chat.id}/onHandshake.xml`)).toContain('<inbound>');
    // Nothing of the API is left out but what every API leaves: its listeners are the gateway's.
    expect(messagesFor(findings, 'apis/chat-api/apiInformation.json')).toEqual([
      "protocols: the gateway's listeners decide http and https",
    ]);
    expect(findings.filter((finding) => finding.file.startsWith('apis/chat-api/'))).toHaveLength(1);
  });

  it("carries an existing MCP server (type mcp): its backend's endpoint as the service URL, its policy; not an SSE one or one made from a REST API", async () => {
    const root = artifacts({
      'apis/weather-mcp/apiInformation.json': information({
        displayName: 'Weather MCP',
        path: 'weather',
        type: 'mcp',
        protocols: ['https'],
        serviceUrl: 'https://mcp.weather.example/',
        subscriptionRequired: false,
        mcpProperties: { transportType: 'streamable', endpoints: { mcp: { uriTemplate: '/mcp' } } },
      }),
      'apis/weather-mcp/policy.xml': '<policies><inbound><base /></inbound></policies>',
      'apis/echo-mcp/apiInformation.json': information({
        displayName: 'Echo MCP',
        path: 'echo-tools',
        type: 'mcp',
        backendId: '/backends/backend2',
        mcpProperties: { endpoints: [{ name: 'mcp', uriTemplate: '/v1/mcp' }] },
      }),
      'apis/old-mcp/apiInformation.json': information({
        displayName: 'Old MCP',
        path: 'old',
        type: 'mcp',
        serviceUrl: 'https://old.example',
        mcpProperties: { transportType: 'sse', endpoints: [{ name: 'sse', uriTemplate: '/sse' }] },
      }),
      'apis/rest-mcp/apiInformation.json': information({
        displayName: 'REST as MCP',
        path: 'rest-mcp',
        type: 'mcp',
      }),
    });
    const { document, files, findings } = await importApiops(root);
    const weather = document.apis.find((api) => api.urlSuffix === 'weather')!;
    expect(weather).toMatchObject({
      name: 'Weather MCP',
      type: 'mcp',
      serviceUrl: 'https://mcp.weather.example/mcp',
      subscriptionRequired: false,
      policy: `policies/apis/${weather.id}.xml`,
    });
    expect(weather.operations).toBeUndefined();
    expect(files.get(`policies/apis/${weather.id}.xml`)).toContain('<inbound>');
    expect(messagesFor(findings, 'apis/weather-mcp/apiInformation.json')).toEqual([
      "protocols: the gateway's listeners decide http and https",
    ]);
    expect(document.apis.find((api) => api.urlSuffix === 'echo-tools')).toMatchObject({
      type: 'mcp',
      serviceUrl: 'https://postman-echo.com/v1/mcp',
    });
    expect(messagesFor(findings, 'apis/echo-mcp/apiInformation.json')).toEqual([]);
    expect(document.apis.some((api) => api.urlSuffix === 'old' || api.urlSuffix === 'rest-mcp')).toBe(false);
    expect(messagesFor(findings, 'apis/old-mcp/apiInformation.json')).toContain(
      'mcpProperties.transportType sse: Portcullis reaches MCP servers over Streamable HTTP only (not the HTTP+SSE transport of 2024-11-05); the API is left out',
    );
    expect(messagesFor(findings, 'apis/rest-mcp/apiInformation.json')).toContain(
      "an MCP server made from a REST API's operations: Portcullis serves every API's operations as tools at /v1/mcp; left out",
    );
  });

  it('carries a GraphQL API: its schema (specification.graphql) beside the configuration, no operations', async () => {
    const { document, files } = await importApiops(sample);
    const graphql = document.apis.find((api) => api.id === 'graphql-api')!;
    expect(graphql).toMatchObject({
      type: 'graphql',
      serviceUrl: 'https://httpbin.org',
      graphql: { schema: 'schemas/graphql-api.graphql' },
    });
    expect(graphql.operations).toBeUndefined();
    expect(files.get('schemas/graphql-api.graphql')).toContain('sampleMessage: String');
  });

  it('carries a GraphQL schema given as an introspection result, and leaves out a synthetic GraphQL API', async () => {
    const { execute, parse, buildSchema, getIntrospectionQuery } = await import('graphql');
    const introspection = execute({
      schema: buildSchema('type Query { launches: [String] }'),
      document: parse(getIntrospectionQuery()),
    });
    const root = artifacts({
      'apis/space/apiInformation.json': information({
        path: 'space',
        type: 'graphql',
        serviceUrl: 'https://space.example/graphql',
      }),
      'apis/space/specification.json': JSON.stringify(introspection),
      'apis/synthetic/apiInformation.json': information({
        path: 'synthetic',
        type: 'graphql',
        serviceUrl: 'https://s.example',
      }),
      'apis/synthetic/specification.graphql': 'type Query { a: String }',
      'apis/synthetic/resolvers/a/resolverInformation.json': information({ path: 'Query/a' }),
      'apis/broken/apiInformation.json': information({
        path: 'broken',
        type: 'graphql',
        serviceUrl: 'https://b.example',
      }),
      'apis/broken/specification.graphql': 'type Query { a: Nope }',
    });
    const { document, files, findings } = await importApiops(root);
    const space = document.apis.find((api) => api.urlSuffix === 'space')!;
    expect(files.get(space.graphql!.schema)).toContain('launches: [String]');
    expect(document.apis.find((api) => api.urlSuffix === 'synthetic')).toBeUndefined();
    expect(messagesFor(findings, 'apis/synthetic/resolvers')[0]).toMatch(/synthetic GraphQL API/);
    expect(document.apis.find((api) => api.urlSuffix === 'broken')).toBeUndefined();
    expect(messagesFor(findings, 'apis/broken/specification.graphql')[0]).toMatch(
      /not a valid GraphQL schema at 1:17 \(Unknown type "Nope"\.\)/,
    );
  });

  it('lists everything it leaves out with the file it came from and why', async () => {
    const { findings } = await importApiops(sample);
    expect(messagesFor(findings, 'apis/graphql-api/apiInformation.json')).toEqual([
      "protocols: the gateway's listeners decide http and https",
    ]);
    expect(messagesFor(findings, 'apis/basic-api/diagnostics')[0]).toMatch(/^API diagnostics/);
    expect(messagesFor(findings, 'subscriptions/subscription1/subscriptionInformation.json')[0]).toMatch(
      /^no keys \(the extractor never writes them\)/,
    );
    for (const folder of ['tags', 'loggers', 'diagnostics'])
      expect(messagesFor(findings, folder)).toHaveLength(1);
  });
});

describe('import apiops: overrides and values the artifacts do not hold', () => {
  it('lays an environment’s overrides over the artifacts, and carries subscriptions whose keys they give', async () => {
    const root = artifacts({
      'configuration.test.yaml': `
namedValues:
  - name: environment-name
    properties: { value: production }
  - name: allowed-ip-address
    properties:
      keyVault: { secretIdentifier: "https://vault.example/secrets/allowed-ip" }
backends:
  - name: backend1
    properties: { url: "http://127.0.0.1:8081" }
subscriptions:
  - name: subscription1
    properties: { primaryKey: primary-key-of-subscription-1, ownerId: /users/alice }
  - name: nowhere
    properties: { displayName: none }
`,
    });
    const { document, findings } = await importApiops(root, {
      overrides: path.join(root, 'configuration.test.yaml'),
    });
    expect(document.namedValues['environment-name']).toBe('production');
    expect(document.namedValues['allowed-ip-address']).toEqual({
      env: 'NAMED_VALUE_ALLOWED_IP_ADDRESS',
      secret: true,
      keyVault: { secretIdentifier: 'https://vault.example/secrets/allowed-ip' },
    });
    expect(findings).toContainEqual({
      file: 'named values/allowed-ip-address/namedValueInformation.json',
      kind: 'todo',
      message:
        'set NAMED_VALUE_ALLOWED_IP_ADDRESS to the Key Vault secret https://vault.example/secrets/allowed-ip',
    });
    expect(document.backends[0]).toEqual({
      id: 'backend1',
      description: 'HTTPBin backend for scenario APIs.',
      url: 'http://127.0.0.1:8081',
    });
    expect(document.subscriptions).toEqual([
      {
        id: 'subscription1',
        name: 'subscription1',
        scope: { product: 'product1' },
        primaryKey: 'primary-key-of-subscription-1',
        user: 'alice',
        state: 'active',
      },
    ]);
    expect(document.users).toEqual([{ id: 'alice' }]);
    expect(messagesFor(findings, path.join(root, 'configuration.test.yaml'))).toEqual([
      'line 14: override of subscriptions "nowhere" matches no artifact it maps to',
    ]);
  });

  it('turns secrets without a value and pipeline tokens into environment variables, never into values', async () => {
    const root = artifacts({
      'named values/api-key/namedValueInformation.json': information({
        displayName: 'api-key',
        secret: true,
      }),
      'named values/token/namedValueInformation.json': information({
        displayName: 'token',
        value: '{#TOKEN_VALUE#}',
      }),
    });
    const { document, findings } = await importApiops(root);
    expect(document.namedValues['api-key']).toEqual({ env: 'NAMED_VALUE_API_KEY', secret: true });
    expect(document.namedValues.token).toEqual({ env: 'TOKEN_VALUE', secret: false });
    expect(findings.filter((finding) => finding.kind === 'todo').map((finding) => finding.message)).toEqual([
      'set NAMED_VALUE_API_KEY: the artifacts hold no value for "api-key" (a secret is never extracted)',
      'set TOKEN_VALUE: the value is the pipeline token {#TOKEN_VALUE#}',
    ]);
  });

  it('reads the publisher’s real overrides sample, listing what matches nothing', async () => {
    const { findings } = await importApiops(sample, { overrides: prodOverrides });
    const unmatched = messagesFor(findings, prodOverrides);
    expect(unmatched).toContain(
      'line 55: override of backends "helloworldfromfuncapp" matches no artifact it maps to',
    );
    expect(unmatched).toContain('loggers line 33: an override without a name is ignored');
    expect(unmatched.length).toBeGreaterThan(5);
  });

  // Issue 29: each override was turned into data on its own, so an alias lost its anchor (it became `{ source }`);
  // the file is now read as every YAML file is, aliases bounded.
  it('reads anchors and aliases of an overrides file, and refuses an alias bomb in one', async () => {
    const root = artifacts({
      'configuration.test.yaml': `
shared: &local { url: "http://127.0.0.1:8081" }
backends:
  - name: backend1
    properties: *local
  - name: backend2
    properties: *local
`,
      'configuration.bomb.yaml': `
a: &a [x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
backends:
  - name: backend1
    properties: { url: "http://127.0.0.1:8081", tags: *c }
`,
    });
    const { document } = await importApiops(root, { overrides: path.join(root, 'configuration.test.yaml') });
    expect(document.backends).toEqual([
      { id: 'backend1', description: 'HTTPBin backend for scenario APIs.', url: 'http://127.0.0.1:8081' },
      {
        id: 'backend2',
        description: 'Postman Echo backend for scenario APIs.',
        url: 'http://127.0.0.1:8081',
      },
    ]);
    const bomb = path.join(root, 'configuration.bomb.yaml');
    await expect(importApiops(root, { overrides: bomb })).rejects.toThrow(
      new ApiopsError([
        {
          file: bomb,
          line: 1,
          column: 1,
          message: 'aliases would expand past 100 nodes (a YAML alias bomb?)',
        },
      ]),
    );
  });

  it('carries backend credentials, circuit breakers and pools, and leaves out APIs of a set it cannot read', async () => {
    const breaker = {
      name: 'trip',
      failureCondition: {
        count: 1,
        interval: 'PT1M',
        statusCodeRanges: [{ min: 429, max: 429 }],
        errorReasons: ['x'],
      },
      tripDuration: 'PT1M',
      acceptRetryAfter: true,
    };
    const root = artifacts({
      'backends/guarded/backendInformation.json': information({
        url: 'https://guarded.example',
        protocol: 'http',
        description: 'guarded',
        credentials: { header: { 'x-key': ['{{guarded-key}}'] }, certificateIds: ['c1'] },
        tls: { validateCertificateChain: false, validateCertificateName: false },
        circuitBreaker: { rules: [breaker] },
        proxy: { url: 'http://proxy.example' },
      }),
      'backends/pool/backendInformation.json': information({
        type: 'Pool',
        pool: {
          services: [
            { id: '/backends/backend1', priority: 1, weight: 3 },
            {
              id: '/subscriptions/s/resourceGroups/g/providers/Microsoft.ApiManagement/service/a/backends/guarded',
            },
          ],
          // As API Management's docs write it; a sample's extra keys beside sessionId are not read.
          sessionAffinity: {
            affinityType: 'Cookie',
            sessionId: { source: 'Cookie', name: 'APIM-Backend-Affinity' },
          },
        },
      }),
      'backends/sessions-elsewhere/backendInformation.json': information({
        type: 'Pool',
        pool: {
          services: [{ id: '/backends/backend1' }],
          sessionAffinity: { sessionId: { source: 'Header', name: 'x-session' } },
        },
      }),
      // Header versioning without the header's name: nothing tells the versions apart.
      'version sets/by-header/versionSetInformation.json': information({
        displayName: 'by header',
        versioningScheme: 'Header',
        versionQueryName: 'api-version',
      }),
      'apis/headed/apiInformation.json': information({
        path: 'headed',
        serviceUrl: 'https://httpbin.org',
        apiVersion: 'v1',
        apiVersionSetId: '/apiVersionSets/by-header',
      }),
    });
    const { document, findings } = await importApiops(root);
    expect(document.backends.map((backend) => backend.id)).toEqual([
      'backend1',
      'backend2',
      'guarded',
      'pool',
      'sessions-elsewhere',
    ]);
    expect(document.backends.find((backend) => backend.id === 'guarded')).toEqual({
      id: 'guarded',
      description: 'guarded',
      url: 'https://guarded.example',
      credentials: { header: { 'x-key': ['{{guarded-key}}'] } },
      tls: { validateCertificateChain: false, validateCertificateName: false },
      circuitBreaker: { rules: [breaker] },
    });
    expect(document.backends.find((backend) => backend.id === 'pool')).toEqual({
      id: 'pool',
      type: 'pool',
      pool: {
        services: [{ id: 'backend1', priority: 1, weight: 3 }, { id: 'guarded' }],
        sessionAffinity: { sessionId: { source: 'Cookie', name: 'APIM-Backend-Affinity' } },
      },
    });
    expect(document.backends.find((backend) => backend.id === 'sessions-elsewhere')?.pool).toEqual({
      services: [{ id: 'backend1' }],
    });
    expect(messagesFor(findings, 'backends/sessions-elsewhere/backendInformation.json')).toEqual([
      'pool.sessionAffinity: only a session id from a cookie (sessionId: { source: Cookie, name }) is supported; requests spread by weight',
    ]);
    const guarded = messagesFor(findings, 'backends/guarded/backendInformation.json');
    expect(guarded.map((message) => message.split(':')[0])).toEqual(['proxy', 'credentials.certificateIds']);
    expect(messagesFor(findings, 'backends/pool/backendInformation.json')).toEqual([]);

    // And back: the entity as API Management writes it (a pool's members by /backends/<id>).
    const exported = exportApiops(
      { ...document, apis: [] },
      { policyText: () => '<policies />', fileText: () => '' },
    );
    expect(JSON.parse(exported.files.get('backends/pool/backendInformation.json')!).properties).toEqual({
      type: 'Pool',
      pool: {
        services: [{ id: '/backends/backend1', priority: 1, weight: 3 }, { id: '/backends/guarded' }],
        sessionAffinity: { sessionId: { source: 'Cookie', name: 'APIM-Backend-Affinity' } },
      },
    });
    expect(
      JSON.parse(exported.files.get('backends/guarded/backendInformation.json')!).properties,
    ).toMatchObject({
      url: 'https://guarded.example',
      protocol: 'http',
      credentials: { header: { 'x-key': ['{{guarded-key}}'] } },
      circuitBreaker: { rules: [breaker] },
    });
    expect(document.apis.some((api) => api.id === 'headed')).toBe(false);
    expect(messagesFor(findings, 'version sets/by-header/versionSetInformation.json')).toEqual([
      "versionQueryName: only read with versioningScheme Query (this set's is Header)",
      'versionHeaderName: versioningScheme Header needs the name the version travels in, got null; the set is left out',
    ]);
    expect(messagesFor(findings, 'apis/headed/apiInformation.json').at(-1)).toBe(
      'apiVersionSetId /apiVersionSets/by-header: the version set is not among the sets carried over; the API is left out',
    );
  });

  it('refuses a file that is not JSON, naming it, and a folder that does not exist', async () => {
    const root = artifacts({ 'backends/broken/backendInformation.json': '{ "properties": ' });
    await expect(importApiops(root)).rejects.toThrow(
      new RegExp(`^${path.join(root, 'backends/broken/backendInformation.json')}: not JSON`),
    );
    await expect(importApiops(path.join(root, 'missing'))).rejects.toBeInstanceOf(ApiopsError);
  });
});

describe('import apiops: header- and query-versioned sets', () => {
  it('carries the sets with the header or query parameter that names the version, their versions on one suffix', async () => {
    const { document, findings } = await importApiops(headerQueryVersions);
    expect(document.versionSets).toEqual([
      {
        id: 'orders-versions',
        name: 'Orders',
        description: 'Versions of the Orders API, chosen by the Api-Version header.',
        scheme: 'header',
        header: 'Api-Version',
      },
      {
        id: 'stock-versions',
        name: 'Stock',
        description: 'Versions of the Stock API, chosen by the api-version query parameter.',
        scheme: 'query',
        query: 'api-version',
      },
    ]);
    // The version is not appended to the path, as it would be for Segment versioning; the Original version is "".
    expect(document.apis.map((api) => [api.id, api.urlSuffix, api.version])).toEqual([
      ['orders', 'orders', { set: 'orders-versions', name: '' }],
      ['orders-v2', 'orders', { set: 'orders-versions', name: 'v2' }],
      ['stock-2024-01-01', 'stock', { set: 'stock-versions', name: '2024-01-01' }],
      ['stock-2025-01-01', 'stock', { set: 'stock-versions', name: '2025-01-01' }],
    ]);
    expect(findings.filter((finding) => finding.file.startsWith('version sets/'))).toEqual([]);
  });

  it('exports them as API Management has them: the shared path, the scheme and its name', async () => {
    const { document } = await importApiops(headerQueryVersions);
    const exported = exportApiops(document, { policyText: () => '<policies />', fileText: () => '' });
    const json = (file: string) => JSON.parse(exported.files.get(file)!).properties;
    expect(json('version sets/orders-versions/versionSetInformation.json')).toEqual({
      displayName: 'Orders',
      description: 'Versions of the Orders API, chosen by the Api-Version header.',
      versioningScheme: 'Header',
      versionHeaderName: 'Api-Version',
    });
    expect(json('version sets/stock-versions/versionSetInformation.json')).toMatchObject({
      versioningScheme: 'Query',
      versionQueryName: 'api-version',
    });
    expect(json('apis/orders-v2/apiInformation.json')).toMatchObject({
      path: 'orders',
      apiVersion: 'v2',
      apiVersionSetId: '/apiVersionSets/orders-versions',
    });
    // A header version named like the path's last segment keeps its path: only Segment versions are appended.
    const clash = exportApiops(
      {
        ...document,
        apis: [{ ...document.apis[1]!, urlSuffix: 'shop/v2' }],
        versionSets: [document.versionSets[0]!],
      },
      { policyText: () => '<policies />', fileText: () => '' },
    );
    expect(JSON.parse(clash.files.get('apis/orders-v2/apiInformation.json')!).properties.path).toBe(
      'shop/v2',
    );
  });
});

describe('export apiops', () => {
  it('writes an MCP server API as API Management describes an existing one, and import(export(x)) is x', async () => {
    const mcpApi = (id: string, serviceUrl: string, extra: object = {}) => ({
      id,
      name: `${id} server`,
      type: 'mcp' as const,
      urlSuffix: `${id}-tools`,
      serviceUrl,
      subscriptionRequired: false,
      ...extra,
    });
    const document = {
      ...emptyDocument(),
      apis: [
        mcpApi('weather', 'https://mcp.weather.example/mcp', {
          policy: 'weather.xml',
          description: 'Forecasts',
        }),
        mcpApi('echo', 'https://postman-echo.com/v1/mcp', { subscriptionRequired: true }),
        mcpApi('bare', 'https://bare.example'),
        mcpApi('ruled', 'http://127.0.0.1:9000/mcp', { mcp: { tools: ['get_*'], writeTools: ['set_*'] } }),
      ],
    };
    const exported = exportApiops(document, {
      policyText: () => '<policies><inbound><base /></inbound></policies>',
      fileText: () => '',
    });
    expect(JSON.parse(exported.files.get('apis/weather/apiInformation.json')!).properties).toEqual({
      path: 'weather-tools',
      apiRevision: '1',
      isCurrent: true,
      displayName: 'weather server',
      description: 'Forecasts',
      type: 'mcp',
      protocols: ['https'],
      serviceUrl: 'https://mcp.weather.example',
      subscriptionRequired: false,
      mcpProperties: { transportType: 'streamable', endpoints: { mcp: { uriTemplate: '/mcp' } } },
    });
    expect(JSON.parse(exported.files.get('apis/bare/apiInformation.json')!).properties.mcpProperties).toEqual(
      {
        transportType: 'streamable',
      },
    );
    expect(exported.files.has('apis/weather/specification.yaml')).toBe(false);
    expect(exported.files.get('apis/weather/policy.xml')).toContain('<inbound>');
    expect(messagesFor(exported.findings, 'apis/ruled/apiInformation.json')).toEqual([
      "mcp.tools: API Management's MCP server has no such property; set it again after an import",
      "mcp.writeTools: API Management's MCP server has no such property; set it again after an import",
    ]);

    // Beside the sample's artifacts, which import as before.
    const root = artifacts(Object.fromEntries(exported.files));
    const back = await importApiops(root);
    const { mcp: _, ...ruled } = document.apis[3] as ReturnType<typeof mcpApi> & { mcp: unknown };
    const ours = new Set(document.apis.map((api) => api.id));
    // In the folders' order.
    expect(back.document.apis.filter((api) => ours.has(api.id))).toEqual([
      document.apis[2],
      document.apis[1],
      ruled,
      { ...document.apis[0], policy: 'policies/apis/weather.xml' },
    ]);
    expect(back.files.get('policies/apis/weather.xml')).toBe(
      '<policies><inbound><base /></inbound></policies>',
    );
    // Nothing of the exported servers is reported but what every API leaves.
    expect(
      back.findings.filter(
        (f) =>
          ours.has(f.file.split('/')[1]!) &&
          f.message !== "protocols: the gateway's listeners decide http and https",
      ),
    ).toEqual([]);
  });

  it('writes a WebSocket API as API Management has one: type websocket, a ws(s) service URL, no specification', () => {
    const exported = exportApiops(
      {
        ...emptyDocument(),
        apis: [
          {
            id: 'chat',
            type: 'websocket',
            urlSuffix: 'chat',
            serviceUrl: 'https://chat.example/socket',
            operations: [{ id: 'onHandshake', method: 'GET', urlTemplate: '/', policy: 'handshake.xml' }],
          },
        ],
      },
      { policyText: () => '<policies />', fileText: () => '' },
    );
    expect(JSON.parse(exported.files.get('apis/chat/apiInformation.json')!).properties).toMatchObject({
      type: 'websocket',
      protocols: ['wss'],
      serviceUrl: 'wss://chat.example/socket',
    });
    expect(exported.files.has('apis/chat/specification.yaml')).toBe(false);
    expect(exported.files.get('apis/chat/operations/onHandshake/policy.xml')).toBe('<policies />');
  });

  it('writes a GraphQL API as API Management has one: type graphql, its schema as specification.graphql', () => {
    const exported = exportApiops(
      {
        ...emptyDocument(),
        apis: [
          {
            id: 'space',
            type: 'graphql',
            urlSuffix: 'space',
            serviceUrl: 'https://space.example/graphql',
            graphql: { schema: 'space.graphql' },
            policy: 'space.xml',
          },
        ],
      },
      {
        policyText: () => '<policies />',
        fileText: (file) => (file === 'space.graphql' ? 'type Query { a: String }' : ''),
      },
    );
    expect(JSON.parse(exported.files.get('apis/space/apiInformation.json')!).properties).toMatchObject({
      type: 'graphql',
      serviceUrl: 'https://space.example/graphql',
    });
    expect(exported.files.get('apis/space/specification.graphql')).toBe('type Query { a: String }');
    expect(exported.files.has('apis/space/specification.yaml')).toBe(false);
    expect(exported.files.get('apis/space/policy.xml')).toBe('<policies />');
  });

  it('writes secrets only to the secrets sections, and Key Vault references back as Key Vault', () => {
    const exported = exportApiops(
      {
        ...emptyDocument(),
        subscriptions: [
          { id: 's1', scope: 'all', primaryKey: 'a-primary-key-of-16+', user: 'u1', state: 'active' },
        ],
        namedValues: {
          plain: 'visible',
          hidden: { value: 'the-secret', secret: true },
          vaulted: {
            env: 'V',
            secret: true,
            keyVault: { secretIdentifier: 'https://vault.example/secrets/v' },
          },
        },
      },
      { policyText: (source) => source, fileText: () => '' },
    );
    const text = [...exported.files.values()].join('\n');
    expect(text).not.toContain('the-secret');
    expect(text).not.toContain('a-primary-key-of-16+');
    expect(JSON.parse(exported.files.get('named values/vaulted/namedValueInformation.json')!)).toEqual({
      properties: {
        displayName: 'vaulted',
        secret: true,
        keyVault: { secretIdentifier: 'https://vault.example/secrets/v' },
      },
    });
    expect(JSON.parse(exported.files.get('subscriptions/s1/subscriptionInformation.json')!)).toEqual({
      properties: { displayName: 's1', scope: '/apis', ownerId: '/users/u1', state: 'active' },
    });
    expect(Object.fromEntries(exported.secrets)).toEqual({
      namedValues: [{ name: 'hidden', properties: { value: 'the-secret' } }],
      subscriptions: [{ name: 's1', properties: { primaryKey: 'a-primary-key-of-16+' } }],
    });
  });
});
