import { HeaderCollection, MessageBody, RequestModel, ResponseModel } from '../../expr/index.js';
import { type CompileContext, defineElement } from '../element.js';
import { reasonPhrase } from '../message.js';
import type { NodeOf } from '../node.js';
import { serializeHeaders } from '../runner.js';
import { PolicyError, type RunContext, type Statement } from '../runtime.js';
import { ALL_SCOPES, ALL_SECTIONS, bool, elements, int, oneOf, str, text } from '../schema.js';

/** Children shared with send-one-way-request: the request is built by set-url/set-method/set-header/set-body. */
export const REQUEST_CHILDREN = elements(
  { name: 'set-url', max: 1, content: text(true, true) },
  { name: 'set-method', max: 1, policy: true, target: 'pending-request' },
  { name: 'set-header', policy: true, target: 'pending-request' },
  { name: 'set-body', max: 1, policy: true, target: 'pending-request' },
  { name: 'authentication-certificate', max: 1, content: { kind: 'any' } },
  { name: 'authentication-managed-identity', max: 1, content: { kind: 'any' } },
  { name: 'proxy', max: 1, content: { kind: 'any' } },
);

export type SideRequest = (run: RunContext) => {
  method: string;
  url: string;
  headers: [string, string][];
  body: Buffer | undefined;
};

/** send-request or send-one-way-request: whatever their attributes, both hold REQUEST_CHILDREN. */
type SideRequestNode = Pick<NodeOf<{ content: typeof REQUEST_CHILDREN }>, 'children' | 'child'>;

/** Compiles the request-building children; reports the ones that need Azure or are not implemented. */
export function compileSideRequest(
  node: SideRequestNode,
  c: CompileContext,
  mode: (run: RunContext) => string,
): SideRequest {
  for (const child of node.children) {
    if (child.name === 'authentication-managed-identity') {
      c.error(
        child,
        'not-supported',
        '"authentication-managed-identity" is not supported: needs Azure managed identity',
      );
    } else if (child.name === 'authentication-certificate') {
      c.error(child, 'not-implemented', '"authentication-certificate" is not implemented yet');
    } else if (child.name === 'proxy') {
      c.error(child, 'not-implemented', '"proxy" is not implemented yet');
    }
  }
  const url = node.child('set-url')?.text();
  const steps = node.children.map((ch) => ch.statement).filter((s): s is Statement => s !== undefined);
  return (run) => {
    const copy = mode(run) === 'copy';
    const source = run.context.request;
    const request = new RequestModel({
      method: copy ? source.method : 'GET',
      url: copy ? source.url.clone() : 'http://localhost/',
      headers: copy ? new HeaderCollection(source.headers.entries()) : new HeaderCollection(),
      // In outbound, copy mode does not copy the body (the request body is gone by then).
      body:
        copy && run.section !== 'outbound' && source.body !== null
          ? new MessageBody(source.body.bytes)
          : null,
    });
    let target = copy ? source.url.toString() : undefined;
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
    };
  };
}

/** Calls another HTTP service and stores its response (an IResponse) in a variable. */
export const sendRequest = defineElement({
  name: 'send-request',
  summary: 'Sends a request to another service and stores the response in a variable.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    mode: oneOf(['new', 'copy'], { default: 'new' }),
    'response-variable-name': str({ required: true }),
    timeout: int({ default: 60, min: 1 }),
    'ignore-error': bool({ default: false, expression: false }),
  },
  content: REQUEST_CHILDREN,
  compile(node, c) {
    const mode = node.getter('mode');
    const variable = node.getter('response-variable-name');
    const timeout = node.getter('timeout');
    const ignoreError = node.literal('ignore-error') === true;
    const build = compileSideRequest(node, c, mode);
    if (node.child('set-url') === undefined && node.literal('mode') === 'new') {
      c.error(node, 'children', 'send-request in mode "new" needs a <set-url>, got none');
    }
    return async (run): Promise<'next'> => {
      const name = variable(run);
      const request = build(run);
      try {
        const response = await run.services.fetch({ ...request, timeoutMs: timeout(run) * 1000 });
        run.context.variables.set(
          name,
          new ResponseModel({
            statusCode: response.status,
            statusReason: response.reason || reasonPhrase(response.status),
            headers: new HeaderCollection(response.headers),
            body: response.body,
          }),
        );
      } catch (err) {
        if (ignoreError) {
          run.context.variables.set(name, null);
          return 'next';
        }
        const timedOut = (err as { code?: string }).code === 'TIMEOUT';
        run.services.logger.warn('send-request failed', { url: request.url, error: (err as Error).message });
        throw new PolicyError(
          timedOut ? 'Timeout' : 'BackendConnectionFailure',
          timedOut
            ? `Request to ${new URL(request.url).host} timed out.`
            : `Request to ${new URL(request.url).host} failed.`,
          500,
          'Internal server error',
        );
      }
      return 'next';
    };
  },
});
