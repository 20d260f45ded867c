import { randomToken } from './crypto.js';

/**
 * Server-rendered pages of the authorization endpoint. Plain HTML with one inline stylesheet allowed by a
 * per-response nonce; no scripts, no third-party resources (RFC 9700 §4.2.4). Every interpolated value goes
 * through escapeHtml().
 */

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}form{display:grid;gap:.75rem}label{display:grid;gap:.25rem}
input[type=text],input[type=password]{padding:.5rem;font-size:1rem}
button{padding:.6rem 1rem;font-size:1rem;cursor:pointer}.error{color:#a00}.row{display:flex;gap:.75rem}
ul{padding-left:1.2rem}code{background:#f3f3f3;padding:0 .2rem}`;

export interface RenderedPage {
  html: string;
  /** The Content-Security-Policy carrying the style nonce. */
  csp: string;
}

function page(title: string, body: string): RenderedPage {
  const nonce = randomToken(16);
  return {
    html: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="same-origin"><title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style></head>
<body><main>
${body}
</main></body></html>
`,
    csp: `default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; frame-ancestors 'none'`,
  };
}

export interface LoginView {
  action: string;
  interaction: string;
  csrf: string;
  clientName: string;
  username?: string;
  error?: string;
  /** The upstream OpenID Connect provider's button, posted to its own action with the same hidden fields. */
  upstream?: { action: string; name: string };
  /** False when no user is configured: only the upstream button is shown. */
  passwords?: boolean;
}

export function loginPage(view: LoginView): RenderedPage {
  return page(
    'Sign in',
    `<h1>Sign in</h1>
<p><strong>${escapeHtml(view.clientName)}</strong> wants to access your account.</p>
${view.error ? `<p class="error" role="alert" id="error">${escapeHtml(view.error)}</p>` : ''}
${
  view.passwords === false
    ? ''
    : `<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="interaction" value="${escapeHtml(view.interaction)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<label>User name <input type="text" name="username" autocomplete="username" required value="${escapeHtml(view.username ?? '')}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>`
}${
  view.upstream
    ? `
<form method="post" action="${escapeHtml(view.upstream.action)}" id="upstream">
<input type="hidden" name="interaction" value="${escapeHtml(view.interaction)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<button type="submit">Sign in with ${escapeHtml(view.upstream.name)}</button>
</form>`
    : ''
}`,
  );
}

export interface ConsentView {
  action: string;
  interaction: string;
  csrf: string;
  clientName: string;
  /** The host of the client's metadata document, when its client_id is a URL. */
  clientHost?: string;
  redirectHost: string;
  userName: string;
  scopes: { name: string; description: string }[];
  resource: string;
}

export function consentPage(view: ConsentView): RenderedPage {
  const scopes = view.scopes
    .map((s) => `<li><code>${escapeHtml(s.name)}</code> — ${escapeHtml(s.description)}</li>`)
    .join('\n');
  const identity =
    view.clientHost === undefined
      ? ''
      : `<p id="client-host">This application is identified by <code>${escapeHtml(view.clientHost)}</code>, the site that publishes its description: allow it only if you trust that site.</p>\n`;
  return page(
    'Authorize access',
    `<h1>Authorize ${escapeHtml(view.clientName)}</h1>
<p>Signed in as <strong>${escapeHtml(view.userName)}</strong>.</p>
${identity}<p><strong>${escapeHtml(view.clientName)}</strong> (returning to <code>${escapeHtml(view.redirectHost)}</code>)
asks for access to <code>${escapeHtml(view.resource)}</code> with these permissions:</p>
<ul id="scopes">
${scopes || '<li>no permissions (identity only)</li>'}
</ul>
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="interaction" value="${escapeHtml(view.interaction)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<div class="row"><button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></div>
</form>`,
  );
}

export function errorPage(code: string, message: string): RenderedPage {
  return page(
    'Authorization error',
    `<h1>This request cannot be completed</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p>Error code: <code id="error">${escapeHtml(code)}</code></p>
<p>You were not redirected back to the application because the request could not be verified.</p>`,
  );
}

/** Human wording of a scope for the consent page. */
export function describeScope(scope: string): string {
  const m = /^(read|write):(.+)-work$/.exec(scope);
  if (!m) return scope;
  return m[1] === 'read'
    ? `read data through the ${m[2]} APIs (GET and HEAD operations)`
    : `change data through the ${m[2]} APIs (POST, PUT, PATCH and DELETE operations)`;
}
