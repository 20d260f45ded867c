/** Where the endpoint lives and where its RFC 9728 metadata is served, derived once from `resourceUrl`. */
export interface ResourceLocation {
  /** Exactly the URL clients use; the PRM `resource` and the token audience. */
  readonly resource: string;
  /** The endpoint path without a trailing slash, e.g. `/v1/mcp`. */
  readonly path: string;
  /** The path-inserted well-known path (RFC 9728 §3.1), e.g. `/.well-known/oauth-protected-resource/v1/mcp`. */
  readonly metadataPath: string;
  /** The absolute URL of `metadataPath`, sent as `resource_metadata` in challenges. */
  readonly metadataUrl: string;
}

export const WELL_KNOWN_PRM = '/.well-known/oauth-protected-resource';

export function locateResource(resourceUrl: string): ResourceLocation {
  let url: URL;
  try {
    url = new URL(resourceUrl);
  } catch {
    throw new TypeError(
      `createMcpEndpoint: resourceUrl must be an absolute URL, got ${JSON.stringify(resourceUrl)}`,
    );
  }
  if (url.search || url.hash) {
    throw new TypeError(
      `createMcpEndpoint: resourceUrl must have no query or fragment, got ${JSON.stringify(resourceUrl)}`,
    );
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '')
    throw new TypeError(`createMcpEndpoint: resourceUrl needs a path (e.g. /v1/mcp), got ${resourceUrl}`);
  const metadataPath = `${WELL_KNOWN_PRM}${path}`;
  return { resource: resourceUrl, path, metadataPath, metadataUrl: `${url.origin}${metadataPath}` };
}

export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly resource_name?: string;
}

export function protectedResourceMetadata(
  location: ResourceLocation,
  issuer: string,
  scopes: readonly string[],
  resourceName?: string,
): ProtectedResourceMetadata {
  const doc: ProtectedResourceMetadata = {
    resource: location.resource,
    authorization_servers: [issuer],
    scopes_supported: scopes,
    bearer_methods_supported: ['header'],
  };
  return resourceName ? { ...doc, resource_name: resourceName } : doc;
}
