/** One Check ⇄ one exchange's request-headers phase: what the exchange sees, and what Envoy gets back. */
import { describe, expect, it } from 'vitest';
import { answerCheck, checkHead } from '../../../src/extauthz/check.js';
import type { Exchange, MessageHead, PhaseResult } from '../../../src/extproc/exchange.js';

function exchangeAnswering(result: PhaseResult | (() => never)) {
  const seen: { head?: MessageHead; ended: boolean } = { ended: false };
  const factory = (): Exchange => ({
    requestHeaders(head) {
      seen.head = head;
      return typeof result === 'function' ? result() : result;
    },
    end() {
      seen.ended = true;
    },
  });
  return { factory, seen };
}

const request = {
  attributes: {
    source: {
      address: { socket_address: { address: '2001:db8::7', port_value: 4711 } },
      certificate: 'PEM%20',
    },
    request: {
      http: {
        method: 'GET',
        path: '/api/x?q=1',
        host: 'gw.example',
        scheme: 'https',
        header_map: {
          headers: [
            { key: ':method', raw_value: Buffer.from('GET') },
            { key: 'x-twice', raw_value: Buffer.from('a') },
            { key: 'x-twice', raw_value: Buffer.from('b') },
          ],
        },
      },
    },
  },
};

describe('an ext_authz Check', () => {
  it('shows the exchange the headers (repeated ones apart), the pseudo-headers and the attributes ext_proc sends', () => {
    const head = checkHead(request);
    expect(head.headers.get('x-twice')).toEqual(['a', 'b']);
    expect(head.headers.get(':path')).toEqual(['/api/x?q=1']);
    expect(head.headers.get(':authority')).toEqual(['gw.example']);
    expect(head.attributes.get('source.address')).toBe('[2001:db8::7]:4711');
    expect(head.attributes.get('connection.mtls')).toBe(true);
    expect(head.attributes.get('connection.peer_certificate')).toBe('PEM%20');
  });

  it('reads the comma-joined header map when Envoy sends no raw headers', () => {
    const head = checkHead({ attributes: { request: { http: { headers: { 'X-One': '1,2' }, path: '/' } } } });
    expect(head.headers.get('x-one')).toEqual(['1,2']);
  });

  it('allows with the header changes and removals, and ends the exchange', async () => {
    const { factory, seen } = exchangeAnswering({
      action: 'continue',
      headers: [
        { name: ':path', value: '/backend/x' },
        { name: 'x-listed', value: 'two', append: true },
      ],
      removeHeaders: ['x-portcullis-backend'],
    });
    const response = await answerCheck(request, factory, { onRefusedExchange: () => {} });
    expect(response).toEqual({
      status: { code: 0 },
      ok_response: {
        headers: [
          { header: { key: ':path', value: '/backend/x' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
          { header: { key: 'x-listed', value: 'two' }, append_action: 'APPEND_IF_EXISTS_OR_ADD' },
        ],
        headers_to_remove: ['x-portcullis-backend'],
      },
    });
    expect(seen.ended).toBe(true);
  });

  it('denies with the response the exchange built', async () => {
    const { factory } = exchangeAnswering({
      action: 'respond',
      status: 401,
      headers: [
        { name: 'content-type', value: 'application/json', append: true },
        { name: 'x-a', value: '1', append: true },
        { name: 'x-a', value: '2', append: true },
      ],
      body: Buffer.from('{"statusCode":401}'),
    });
    const response = await answerCheck(request, factory, { onRefusedExchange: () => {} });
    expect(response.status.code).toBe(7);
    expect(response.denied_response).toEqual({
      status: { code: 401 },
      headers: [
        {
          header: { key: 'content-type', value: 'application/json' },
          append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
        },
        { header: { key: 'x-a', value: '1' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
        { header: { key: 'x-a', value: '2' }, append_action: 'APPEND_IF_EXISTS_OR_ADD' },
      ],
      body: '{"statusCode":401}',
    });
  });

  it.each<[string, PhaseResult | (() => never), string]>([
    [
      'asks for the request body',
      { action: 'continue', next: { requestBody: true } },
      'the operation needs the request body',
    ],
    ['replaces the body', { action: 'continue', body: Buffer.from('x') }, 'replaces the request body'],
    [
      'throws',
      () => {
        throw new Error('boom');
      },
      'boom',
    ],
  ])('refuses with a safe 500 when the exchange %s, and says why in the log', async (_, result, reason) => {
    const refusals: string[] = [];
    const { factory, seen } = exchangeAnswering(result);
    const response = await answerCheck(request, factory, { onRefusedExchange: (why) => refusals.push(why) });
    expect(response.denied_response?.status.code).toBe(500);
    expect(response.denied_response?.body).toBe('{"statusCode":500,"message":"Internal server error"}');
    expect(refusals[0]).toContain(reason);
    expect(seen.ended).toBe(true);
  });
});
