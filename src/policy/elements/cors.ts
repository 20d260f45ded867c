import { HeaderCollection, ResponseModel } from '../../expr/index.js';
import { defineElement } from '../element.js';
import type { RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, elements, int, text } from '../schema.js';

/** `https://a.com` and `https://a.com:443` are the same origin: compare with the default port made explicit. */
function normalizeOrigin(origin: string): string {
  try {
    const u = new URL(origin);
    const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
    return `${u.protocol}//${u.hostname}:${port}`.toLowerCase();
  } catch {
    return origin.toLowerCase();
  }
}

/** Empty 200 OK with the given headers. */
function answer(run: RunContext, headers: [string, string][]): 'respond' {
  run.context.response = new ResponseModel({
    statusCode: 200,
    statusReason: 'OK',
    headers: new HeaderCollection(headers),
    body: '',
  });
  return 'respond';
}

/** CORS: answers preflight requests and adds the CORS headers to actual cross-origin responses. */
export const cors = defineElement({
  name: 'cors',
  summary: 'Cross-origin resource sharing: preflight answers and response headers.',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: {
    'allow-credentials': bool({ default: false }),
    // The reference's table says false, its own troubleshooting text and current gateways use true.
    'terminate-unmatched-request': bool({ default: true }),
  },
  content: elements(
    {
      name: 'allowed-origins',
      min: 1,
      max: 1,
      content: elements({ name: 'origin', min: 1, content: text(true, true) }),
    },
    {
      name: 'allowed-methods',
      max: 1,
      attributes: { 'preflight-result-max-age': int({ default: 0, min: 0 }) },
      content: elements({ name: 'method', content: text(true, true) }),
    },
    { name: 'allowed-headers', max: 1, content: elements({ name: 'header', content: text(true, true) }) },
    { name: 'expose-headers', max: 1, content: elements({ name: 'header', content: text(true, true) }) },
  ),
  oncePerSection: true,
  touchesResponse: true,
  compile(node) {
    const origins =
      node
        .child('allowed-origins')
        ?.childrenNamed('origin')
        .map((o) => o.text()) ?? [];
    const methodsNode = node.child('allowed-methods');
    const methods = methodsNode?.childrenNamed('method').map((m) => m.text()) ?? [];
    const maxAge = methodsNode?.getter('preflight-result-max-age') ?? (() => 0);
    const allowedHeaders =
      node
        .child('allowed-headers')
        ?.childrenNamed('header')
        .map((h) => h.text()) ?? [];
    const exposeHeaders =
      node
        .child('expose-headers')
        ?.childrenNamed('header')
        .map((h) => h.text()) ?? [];
    const credentials = node.getter('allow-credentials');
    const terminate = node.getter('terminate-unmatched-request');
    return (run) => {
      const request = run.context.request;
      const origin = request.headers.getJoined('Origin');
      if (origin === undefined) return 'next';
      const allowed = origins.map((o) => o(run).trim());
      const anyOrigin = allowed.includes('*');
      const originOk = anyOrigin || allowed.some((o) => normalizeOrigin(o) === normalizeOrigin(origin));
      const withCredentials = credentials(run);
      // With credentials the browser rejects "*": echo the origin instead.
      const allowOrigin = anyOrigin && !withCredentials ? '*' : origin;
      const requestedMethod = request.headers.getJoined('Access-Control-Request-Method');
      if (request.method === 'OPTIONS' && requestedMethod !== undefined) {
        const methodList = methods.map((m) => m(run).trim().toUpperCase());
        const allowedMethods = methodList.length === 0 ? ['GET', 'POST'] : methodList;
        const methodOk =
          allowedMethods.includes('*') || allowedMethods.includes(requestedMethod.trim().toUpperCase());
        const headerList = allowedHeaders.map((h) => h(run).trim().toLowerCase());
        const requested = (request.headers.getJoined('Access-Control-Request-Headers') ?? '')
          .split(',')
          .map((h) => h.trim().toLowerCase())
          .filter((h) => h !== '');
        const headersOk = headerList.includes('*') || requested.every((h) => headerList.includes(h));
        if (!(originOk && methodOk && headersOk)) return terminate(run) ? answer(run, []) : 'next';
        const headers: [string, string][] = [
          ['Access-Control-Allow-Origin', allowOrigin],
          [
            'Access-Control-Allow-Methods',
            allowedMethods.includes('*') ? requestedMethod : allowedMethods.join(','),
          ],
        ];
        if (requested.length > 0) {
          headers.push([
            'Access-Control-Allow-Headers',
            headerList.includes('*') ? requested.join(',') : requested.join(','),
          ]);
        }
        if (withCredentials) headers.push(['Access-Control-Allow-Credentials', 'true']);
        const age = maxAge(run);
        if (age > 0) headers.push(['Access-Control-Max-Age', String(age)]);
        if (allowOrigin !== '*') headers.push(['Vary', 'Origin']);
        return answer(run, headers);
      }
      if (!originOk) return terminate(run) ? answer(run, []) : 'next';
      const add = run.responseHeaderAdditions;
      add.push(['Access-Control-Allow-Origin', allowOrigin]);
      if (withCredentials) add.push(['Access-Control-Allow-Credentials', 'true']);
      const exposed = exposeHeaders.map((h) => h(run).trim()).filter((h) => h !== '');
      if (exposed.length > 0) add.push(['Access-Control-Expose-Headers', exposed.join(',')]);
      if (allowOrigin !== '*') add.push(['Vary', 'Origin']);
      return 'next';
    };
  },
});
