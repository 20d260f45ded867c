/**
 * A minimal user agent for the authorization server's pages: a cookie jar, manual redirects and form posts. It
 * drives the real login and consent pages over HTTP the way a browser would, for clients (oauth4webapi, the MCP
 * SDK) that hand the test an authorization URL.
 */

function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)))
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

export interface PageForm {
  readonly action: string;
  readonly fields: Record<string, string>;
}

/** The first POST form of a page, with its hidden fields. */
export function parseForm(html: string, base: string): PageForm {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form on the page:\n${html}`);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[decodeEntities(m[1]!)] = decodeEntities(m[2]!);
  return { action: new URL(decodeEntities(action), base).href, fields };
}

export class PageDriver {
  readonly cookies = new Map<string, string>();
  /** Every request made, `METHOD URL -> status`, for assertions on the sequence. */
  readonly log: string[] = [];

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0)
      headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.log.push(`${init.method ?? 'GET'} ${url} -> ${response.status}`);
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  }

  async submit(page: PageForm, fields: Record<string, string>, origin: string): Promise<Response> {
    return this.fetch(page.action, {
      method: 'POST',
      body: new URLSearchParams({ ...page.fields, ...fields }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    });
  }

  /**
   * Opens an authorization URL and goes through the login page (when there is no session yet) and the consent
   * page, until the server redirects away from itself. Returns that redirect (the client's callback URL). A user
   * `{ upstream }` signs in with the login page's upstream button instead, as that account at the upstream
   * provider (node-oidc-provider's development login and consent pages, at `upstream.origin`).
   */
  async authorize(
    authorizationUrl: string,
    user: SignInAs,
    decision: 'allow' | 'deny' = 'allow',
  ): Promise<URL> {
    const origin = new URL(authorizationUrl).origin;
    const upstream = 'upstream' in user ? user.upstream : undefined;
    let current = authorizationUrl;
    let response = await this.fetch(current);
    for (let step = 0; step < 16; step++) {
      const location = response.headers.get('location');
      if (location) {
        const target = new URL(location, current);
        if (target.origin !== origin && target.origin !== upstream?.origin) return target;
        current = target.href;
        response = await this.fetch(current);
        continue;
      }
      const html = await response.text();
      if (response.status !== 200)
        throw new Error(`authorization page answered ${response.status}:\n${html}`);
      if (upstream !== undefined && new URL(current).origin === upstream.origin) {
        // The provider's own pages: its login form (any password), then its consent form.
        const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/.exec(html)?.[1];
        if (!action) throw new Error(`no form on the provider's page:\n${html}`);
        const fields: Record<string, string> = {};
        for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
          fields[m[1]!] = m[2]!;
        if (html.includes('name="login"'))
          Object.assign(fields, { login: upstream.account, password: 'any' });
        current = new URL(action, current).href;
        response = await this.fetch(current, {
          method: 'POST',
          body: new URLSearchParams(fields),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        continue;
      }
      const form = parseForm(html, current);
      if (upstream !== undefined && html.includes('id="upstream"')) {
        const action = /<form method="post" action="([^"]+)" id="upstream">/.exec(html)![1]!;
        current = new URL(decodeEntities(action), current).href;
        response = await this.submit({ action: current, fields: form.fields }, {}, origin);
      } else if (html.includes('name="password"') && 'username' in user) {
        current = form.action;
        response = await this.submit(form, { username: user.username, password: user.password }, origin);
      } else if (html.includes('name="decision"')) {
        current = form.action;
        response = await this.submit(form, { decision }, origin);
      } else {
        throw new Error(`unexpected authorization page:\n${html}`);
      }
    }
    throw new Error(`no redirect to the client after sixteen steps: ${this.log.join(', ')}`);
  }
}

/** Who signs in: a configured user with a password, or an account of the upstream provider at its origin. */
export type SignInAs =
  | { readonly username: string; readonly password: string }
  | { readonly upstream: { readonly origin: string; readonly account: string } };
