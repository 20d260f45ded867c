import { defineElement } from '../element.js';
import { bodyText, messageOf, replaceBody } from '../message.js';
import type { RunContext } from '../runtime.js';
import { ALL_SCOPES, EMPTY } from '../schema.js';

/** scheme://host[:port] of a URL text, or undefined. */
function origin(url: string | undefined): string | undefined {
  if (url === undefined || !URL.canParse(url)) return undefined;
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`;
}

/** The gateway's base (what the client called) and the backend's base for this request. */
function bases(run: RunContext): { gateway: string | undefined; backend: string | undefined } {
  const ctx = run.context;
  const original = ctx.request.originalUrl;
  const apiPath = ctx.api.path === '' ? '' : `/${ctx.api.path.replace(/^\/|\/$/g, '')}`;
  const gateway = origin(`${original.scheme}://${original.host}:${original.port}${apiPath}`);
  const backend = origin(run.backend.baseUrl ?? ctx.api.serviceUrl?.toString());
  return { gateway, backend };
}

/**
 * Rewrites absolute links in the body so clients only ever see gateway URLs: backend base → gateway base in
 * outbound, gateway base → backend base in inbound. Headers such as Location are left alone, as in API
 * Management.
 */
export const redirectContentUrls = defineElement({
  name: 'redirect-content-urls',
  summary: 'Rewrites backend links in bodies to gateway links (and back in inbound).',
  sections: ['inbound', 'outbound'],
  scopes: ALL_SCOPES,
  attributes: {},
  content: EMPTY,
  body: 'read-write',
  compile(_node, c) {
    const target = c.target;
    const inbound = c.section === 'inbound';
    return (run) => {
      const message = messageOf(run, target);
      if (message.body === null) return 'next';
      const { gateway, backend } = bases(run);
      if (gateway === undefined || backend === undefined || gateway === backend) return 'next';
      const [from, to] = inbound ? [gateway, backend] : [backend, gateway];
      const text = bodyText(message);
      if (!text.includes(from)) return 'next';
      replaceBody(run, target, text.split(from).join(to));
      return 'next';
    };
  },
});
