import { describe, expect, it } from 'vitest';
import { inbound, outbound, pipelineOf, policies } from '../../../doubles/policy-services.js';

describe('find-and-replace', () => {
  it('replaces every occurrence in the response body', async () => {
    const { response } = await outbound('<find-and-replace from="cat" to="dog" />', { body: 'cat and cat' });
    expect(response.body.toString()).toBe('dog and dog');
    expect(response.bodyChanged).toBe(true);
  });

  it('deletes with an empty to, and takes values from expressions', async () => {
    const { response } = await outbound('<find-and-replace from="@(&quot;-x&quot;)" to="" />', {
      body: 'a-xb-x',
    });
    expect(response.body.toString()).toBe('ab');
  });

  it('changes the request body in inbound and needs that body', async () => {
    const { outcome } = await inbound('<find-and-replace from="a" to="b" />', {
      method: 'POST',
      body: Buffer.from('aaa'),
    });
    expect(outcome.kind === 'forward' && outcome.request.body?.toString()).toBe('bbb');
    expect(pipelineOf(policies({ inbound: '<find-and-replace from="a" to="b" />' })).needs.requestBody).toBe(
      true,
    );
  });

  it('leaves an unchanged body marked unchanged', async () => {
    const { response } = await outbound('<find-and-replace from="zzz" to="y" />', { body: 'abc' });
    expect(response.bodyChanged).toBe(false);
  });
});
