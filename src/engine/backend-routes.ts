import { apiClusterName, backendClusterName, dynamicClusterName } from '../envoy/contract.js';

/** Where Envoy sends one request: a cluster (chosen by the routing header), the base path, and maybe a host. */
export interface BackendRoute {
  readonly cluster: string;
  /** The backend URL's path without a trailing slash ('' for the root). */
  readonly basePath: string;
  /** `:authority` to set, for the dynamic forward proxy (which resolves the host from it). */
  readonly authority?: string;
  /** The backend's origin, for calls the engine makes itself (retries, followed redirects). */
  readonly origin: string;
}

/**
 * Turns a backend choice (the API's service URL, a named backend, or any base URL a policy computed) into an Envoy
 * cluster. URLs whose origin has a pre-declared cluster use it (health, stats, connection pools per backend);
 * any other http(s) URL goes through the dynamic forward proxy clusters.
 */
export class BackendRoutes {
  private readonly byOrigin = new Map<string, string>();
  /** Each API's own service URL origin: its traffic goes to its own cluster even when APIs share a backend. */
  private readonly apiOrigins = new Map<string, string>();
  /**
   * Routes already worked out, by base URL or backend id: every request needs one, and parsing the URL again each
   * time is most of the cost. Bounded, since a policy may compute a different base URL per request.
   */
  private readonly known = new Map<string, BackendRoute>();

  constructor(
    apis: readonly { id: string; serviceUrl: string }[],
    private readonly backends: ReadonlyMap<string, string>,
  ) {
    for (const api of apis) {
      const origin = new URL(api.serviceUrl).origin;
      this.apiOrigins.set(api.id, origin);
      // An origin several APIs share goes, for a URL no API owns (a policy's base-url), to the first API's cluster.
      if (!this.byOrigin.has(origin)) this.byOrigin.set(origin, apiClusterName(api.id));
    }
    for (const [id, url] of backends) {
      const origin = new URL(url).origin;
      if (!this.byOrigin.has(origin)) this.byOrigin.set(origin, backendClusterName(id));
    }
  }

  /**
   * Throws TypeError for a URL that is not absolute http(s), or an unknown backend id. A URL on the origin of the
   * API the request is for (`apiId`) goes to that API's cluster, so Envoy's statistics name the API the traffic is
   * for, not another API with the same backend.
   */
  forUrl(baseUrl: string, apiId?: string): BackendRoute {
    const key = `url ${apiId ?? ''} ${baseUrl}`;
    return this.known.get(key) ?? this.remember(key, this.routeForUrl(baseUrl, apiId));
  }

  forBackendId(id: string): BackendRoute {
    const key = `id ${id}`;
    return this.known.get(key) ?? this.remember(key, this.routeForBackendId(id));
  }

  private remember(key: string, route: BackendRoute): BackendRoute {
    if (this.known.size >= maxKnownRoutes) this.known.clear();
    this.known.set(key, Object.freeze(route));
    return route;
  }

  private routeForUrl(baseUrl: string, apiId: string | undefined): BackendRoute {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new TypeError(`backend base URL "${baseUrl}" is not an absolute URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`backend base URL "${baseUrl}" must be http or https`);
    }
    const basePath = url.pathname.replace(/\/+$/, '');
    const cluster =
      apiId !== undefined && this.apiOrigins.get(apiId) === url.origin
        ? apiClusterName(apiId)
        : this.byOrigin.get(url.origin);
    if (cluster) return { cluster, basePath, origin: url.origin };
    return {
      cluster: dynamicClusterName(url.protocol === 'https:'),
      basePath,
      authority: url.host,
      origin: url.origin,
    };
  }

  private routeForBackendId(id: string): BackendRoute {
    const url = this.backends.get(id);
    if (url === undefined) throw new TypeError(`no backend with id "${id}"`);
    const parsed = new URL(url);
    return {
      cluster: backendClusterName(id),
      basePath: parsed.pathname.replace(/\/+$/, ''),
      origin: parsed.origin,
    };
  }
}

const maxKnownRoutes = 1000;
