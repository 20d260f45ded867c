/** The request send-request and send-one-way-request build from their children. */
import { HeaderCollection, MessageBody, RequestModel } from '../../expr/index.js';
import type { CompileContext } from '../element.js';
import type { NodeOf } from '../node.js';
import type { RunContext, Statement } from '../runtime.js';
import { bool, elements, str, text } from '../schema.js';
import type { ClientCertificate, HttpProxy } from '../services.js';
import { serializeHeaders } from './headers.js';
import { identityToken } from './managed-identity.js';
import { AUTHENTICATION_CERTIFICATE, compileSideCertificate } from './side-certificate.js';

/** Children shared with send-one-way-request: the request is built by set-url/set-method/set-header/set-body. */
export const REQUEST_CHILDREN = elements(
  { name: 'set-url', max: 1, content: text(true, true) },
  { name: 'set-method', max: 1, policy: true, target: 'pending-request' },
  { name: 'set-header', policy: true, target: 'pending-request' },
  { name: 'set-body', max: 1, policy: true, target: 'pending-request' },
  AUTHENTICATION_CERTIFICATE,
  {
    name: 'authentication-managed-identity',
    max: 1,
    attributes: {
      resource: str({ required: true }),
      'client-id': str({ expression: false }),
      'ignore-error': bool({ default: false }),
    },
  },
  {
    name: 'proxy',
    max: 1,
    // https://learn.microsoft.com/azure/api-management/proxy-policy
    attributes: { url: str({ required: true }), username: str(), password: str() },
  },
);

export type SideRequest = (run: RunContext) => {
  method: string;
  url: string;
  headers: [string, string][];
  body: Buffer | undefined;
  proxy?: HttpProxy;
  clientCertificate?: ClientCertificate;
};

/** The `<proxy>` child: the proxy's URL must be plain http:// (the proxy policy page: HTTP only to the proxy). */
function compileProxy(
  node: SideRequestNode,
  c: CompileContext,
): ((run: RunContext) => HttpProxy) | undefined {
  const child = node.child('proxy');
  if (child === undefined) return undefined;
  const written = child.literal('url');
  if (typeof written === 'string' && !isHttpUrl(written)) {
    c.error(child, 'attribute', `proxy/@url must be an http:// URL (host and port), got "${written}"`);
  }
  const url = child.getter('url');
  const username = child.getter('username');
  const password = child.getter('password');
  return (run) => {
    const proxyUrl = url(run).trim();
    if (!isHttpUrl(proxyUrl)) throw new TypeError(`proxy/@url must be an http:// URL, got "${proxyUrl}"`);
    const user = username?.(run);
    const secret = password?.(run);
    return {
      url: proxyUrl,
      ...(user !== undefined && user !== '' ? { username: user } : {}),
      ...(secret !== undefined ? { password: secret } : {}),
    };
  };
}

const isHttpUrl = (text: string): boolean => URL.canParse(text) && new URL(text).protocol === 'http:';

/** send-request or send-one-way-request: whatever their attributes, both hold REQUEST_CHILDREN. */
type SideRequestNode = Pick<NodeOf<{ content: typeof REQUEST_CHILDREN }>, 'children' | 'child'>;

/**
 * The `<authentication-managed-identity>` child: sets the built request's Authorization from the gateway's identity
 * (asynchronous, so it runs after the synchronous build); undefined when the child is absent.
 */
export function compileSideRequestIdentity(
  node: SideRequestNode,
): ((run: RunContext, headers: [string, string][]) => Promise<void>) | undefined {
  const child = node.child('authentication-managed-identity');
  if (child === undefined) return undefined;
  const resource = child.getter('resource');
  const clientId = child.literal('client-id');
  const ignoreError = child.getter('ignore-error');
  return async (run, headers) => {
    const token = await identityToken(run, {
      element: 'authentication-managed-identity',
      resource: resource(run).trim(),
      clientId: typeof clientId === 'string' ? clientId : undefined,
      ignoreError: ignoreError(run),
    });
    if (token === undefined) return;
    const kept = headers.filter(([name]) => name.toLowerCase() !== 'authorization');
    headers.splice(0, headers.length, ...kept, ['Authorization', `Bearer ${token}`]);
  };
}

/** Compiles the request-building children; reports the ones that need Azure or are not implemented. */
export function compileSideRequest(
  node: SideRequestNode,
  c: CompileContext,
  mode: (run: RunContext) => string,
  /** `mode` as written, when it is not an expression. */
  declaredMode: string | undefined,
): SideRequest {
  // mode="copy" copies the request's body, but for outbound (see below): the engine must ask Envoy for the body,
  // even when nothing else reads it. An expression may come out "copy".
  if (declaredMode !== 'new' && c.section !== 'outbound') c.readsRequestBody();
  const proxy = compileProxy(node, c);
  const certificate = compileSideCertificate(node.child('authentication-certificate'), c);
  const url = node.child('set-url')?.text();
  const steps = node.children.map((ch) => ch.statement).filter((s): s is Statement => s !== undefined);
  return (run) => {
    const copy = mode(run) === 'copy';
    const source = run.context.request;
    const request = new RequestModel({
      method: copy ? source.method : 'GET',
      url: copy ? source.backendUrl.clone() : 'http://localhost/',
      headers: copy ? new HeaderCollection(source.headers.entries()) : new HeaderCollection(),
      // In outbound, copy mode does not copy the body (the request body is gone by then).
      body:
        copy && run.section !== 'outbound' && source.body !== null
          ? new MessageBody(source.body.bytes)
          : null,
    });
    // A copy goes where the request goes (context.Request.Url: the backend's URL), unless set-url says otherwise.
    let target = copy ? source.backendUrl.toString() : undefined;
    if (url !== undefined) target = url(run).trim();
    if (target === undefined || !URL.canParse(target)) {
      throw new TypeError(`send-request/set-url must be an absolute URL, got "${target ?? ''}"`);
    }
    const outer = run.pendingRequest;
    run.pendingRequest = request;
    try {
      // Building the request is synchronous, so parallel send-requests under <wait> never share it.
      for (const step of steps) {
        if (step(run) instanceof Promise) throw new TypeError('send-request children must be synchronous');
      }
    } finally {
      run.pendingRequest = outer;
    }
    return {
      method: request.method,
      url: target,
      headers: serializeHeaders(request.headers),
      body: request.body === null ? undefined : Buffer.from(request.body.bytes),
      ...(proxy ? { proxy: proxy(run) } : {}),
      ...(certificate ? { clientCertificate: certificate(run) } : {}),
    };
  };
}
