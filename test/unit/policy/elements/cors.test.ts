import { describe, expect, it } from 'vitest';
import {
  fakeServices,
  header,
  pipelineOf,
  policies,
  request,
  runAll,
} from '../../../doubles/policy-services.js';

const cors = (attrs = '') =>
  pipelineOf(
    policies({
      inbound: `<cors ${attrs}>
        <allowed-origins><origin>https://app.example.com</origin></allowed-origins>
        <allowed-methods preflight-result-max-age="300"><method>GET</method><method>PUT</method></allowed-methods>
        <allowed-headers><header>content-type</header><header>authorization</header></allowed-headers>
        <expose-headers><header>x-total</header></expose-headers>
      </cors>`,
    }),
  );

const preflight = (origin: string, method: string, headers = 'Content-Type') =>
  request({
    method: 'OPTIONS',
    headers: [
      ['Origin', origin],
      ['Access-Control-Request-Method', method],
      ['Access-Control-Request-Headers', headers],
    ],
  });

describe('cors', () => {
  it('answers a matching preflight itself', async () => {
    const { response, forwarded } = await runAll(
      cors('allow-credentials="true"'),
      preflight('https://app.example.com:443', 'PUT'),
      fakeServices(),
    );
    expect(forwarded).toBe(false);
    expect(response.status).toBe(200);
    expect(header(response, 'Access-Control-Allow-Origin')).toEqual(['https://app.example.com:443']);
    expect(header(response, 'Access-Control-Allow-Methods')).toEqual(['GET,PUT']);
    expect(header(response, 'Access-Control-Allow-Headers')).toEqual(['content-type']);
    expect(header(response, 'Access-Control-Allow-Credentials')).toEqual(['true']);
    expect(header(response, 'Access-Control-Max-Age')).toEqual(['300']);
  });

  it('terminates an unmatched preflight with an empty 200 and no CORS headers', async () => {
    const { response, forwarded } = await runAll(
      cors(),
      preflight('https://evil.example.com', 'PUT'),
      fakeServices(),
    );
    expect(forwarded).toBe(false);
    expect(response.status).toBe(200);
    expect(header(response, 'Access-Control-Allow-Origin')).toEqual([]);
    const method = await runAll(cors(), preflight('https://app.example.com', 'DELETE'), fakeServices());
    expect(header(method.response, 'Access-Control-Allow-Origin')).toEqual([]);
  });

  it('passes an unmatched preflight on when terminate-unmatched-request is false', async () => {
    const { forwarded } = await runAll(
      cors('terminate-unmatched-request="false"'),
      preflight('https://evil.example.com', 'PUT'),
      fakeServices(),
    );
    expect(forwarded).toBe(true);
  });

  it('adds CORS headers to the backend response of an actual cross-origin request', async () => {
    const { response, forwarded } = await runAll(
      cors(),
      request({ headers: [['Origin', 'https://app.example.com']] }),
      fakeServices(),
      {
        status: 200,
        body: 'ok',
      },
    );
    expect(forwarded).toBe(true);
    expect(header(response, 'Access-Control-Allow-Origin')).toEqual(['https://app.example.com']);
    expect(header(response, 'Access-Control-Expose-Headers')).toEqual(['x-total']);
    expect(response.body.toString()).toBe('ok');
  });

  it('leaves same-origin requests alone and asks for response headers', async () => {
    const pipeline = cors();
    expect(pipeline.needs.responseHeaders).toBe(true);
    const { response } = await runAll(pipeline, request(), fakeServices());
    expect(header(response, 'Access-Control-Allow-Origin')).toEqual([]);
  });
});
