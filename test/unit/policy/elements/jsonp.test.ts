import { describe, expect, it } from 'vitest';
import { header, outbound } from '../../../doubles/policy-services.js';

describe('jsonp', () => {
  it('wraps the JSON body in the named callback', async () => {
    const { response } = await outbound(
      '<jsonp callback-parameter-name="cb" />',
      { body: '{"a":1}' },
      { url: 'https://gw/x?cb=handle.data' },
    );
    expect(response.body.toString()).toBe('handle.data({"a":1});');
    expect(header(response, 'Content-Type')).toEqual(['application/javascript; charset=utf-8']);
  });

  it('leaves the body alone without a callback', async () => {
    const { response } = await outbound('<jsonp callback-parameter-name="cb" />', { body: '{"a":1}' });
    expect(response.body.toString()).toBe('{"a":1}');
  });

  it('refuses a callback that is not a plain name', async () => {
    const { response, context } = await outbound(
      '<jsonp callback-parameter-name="cb" />',
      { body: '{}' },
      { url: 'https://gw/x?cb=alert(1)//' },
    );
    expect(response.status).toBe(400);
    expect(context.lastError?.reason).toBe('CallbackParameterInvalid');
  });
});
