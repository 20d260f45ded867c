import { describe, expect, it } from 'vitest';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

// send-request's <proxy> child: https://learn.microsoft.com/azure/api-management/proxy-policy
describe('send-request <proxy>', () => {
  it('hands the proxy (url, username, password; expressions allowed) to the HTTP client with the request', async () => {
    const services = fakeServices({ 'http://backend.test/x': 'ok' });
    await inbound(
      `<send-request mode="new" response-variable-name="r">
         <set-url>http://backend.test/x</set-url>
         <proxy url="@("http://proxy.test:" + 3128)" username="svc" password="p@ss" />
       </send-request>`,
      {},
      services,
    );
    expect(services.fetched.at(-1)?.proxy).toEqual({
      url: 'http://proxy.test:3128',
      username: 'svc',
      password: 'p@ss',
    });
  });

  it('sends no proxy when the child is absent', async () => {
    const services = fakeServices({ 'http://backend.test/x': 'ok' });
    await inbound(
      '<send-request mode="new" response-variable-name="r"><set-url>http://backend.test/x</set-url></send-request>',
      {},
      services,
    );
    expect(services.fetched.at(-1)?.proxy).toBeUndefined();
  });

  it.each([
    ['https://proxy.test:3128', 'must be an http:// URL'],
    ['proxy.test:3128', 'must be an http:// URL'],
  ])('refuses a proxy url of %s at load (HTTP only to the proxy)', (url, message) => {
    const diagnostics = diagnosticsOf(
      `<send-request mode="new" response-variable-name="r"><set-url>http://b/</set-url><proxy url="${url}" /></send-request>`,
      'inbound',
    );
    expect(diagnostics.join('\n')).toContain(message);
  });

  it('requires url', () => {
    const diagnostics = diagnosticsOf(
      '<send-request mode="new" response-variable-name="r"><set-url>http://b/</set-url><proxy /></send-request>',
      'inbound',
    );
    expect(diagnostics.join('\n')).toContain('proxy/@url is required');
  });
});
