/** Which pipelines ext_authz can run: the rule table of src/policy/header-only.ts, one case per rule. */
import { describe, expect, it } from 'vitest';
import { headerOnlyDiagnostic, headerOnlyViolations } from '../../../src/policy/header-only.js';
import { buildPipeline } from '../../../src/policy/pipeline.js';
import { compileAt, pipelineOf, policies } from '../../doubles/policy-services.js';

const inbound = (xml: string) => pipelineOf(policies({ inbound: `<base />${xml}` }));
const reasons = (xml: string) =>
  headerOnlyViolations(inbound(xml)).map((v) => `<${v.use.element}> ${v.reason}`);

describe('header-only pipelines (ext_authz)', () => {
  it.each([
    [
      'check-header',
      '<check-header name="X-A" failed-check-httpcode="401" failed-check-error-message="no" ignore-case="true" />',
    ],
    ['ip-filter', '<ip-filter action="allow"><address>127.0.0.1</address></ip-filter>'],
    [
      'rate-limit-by-key',
      '<rate-limit-by-key calls="1" renewal-period="60" counter-key="k" retry-after-header-name="Retry-After" />',
    ],
    [
      'set-header on the request',
      '<set-header name="X-A" exists-action="override"><value>1</value></set-header>',
    ],
    ['rewrite-uri', '<rewrite-uri template="/other" />'],
    [
      'return-response with a body it builds',
      '<return-response><set-status code="418" /><set-body>{}</set-body></return-response>',
    ],
    [
      'send-request with a body of its own',
      '<send-request mode="new" response-variable-name="r" timeout="5"><set-url>http://127.0.0.1:9/x</set-url><set-method>POST</set-method><set-body>{}</set-body></send-request>',
    ],
    [
      'choose over header-only branches',
      '<choose><when condition="@(context.Request.Headers.ContainsKey(&quot;X&quot;))"><set-variable name="v" value="1" /></when></choose>',
    ],
  ])('lets %s through', (_, xml) => {
    expect(reasons(xml)).toEqual([]);
  });

  it.each([
    ['set-body on the request', '<set-body>{}</set-body>', '<set-body> it replaces the request body'],
    [
      'cache-lookup',
      '<cache-lookup vary-by-developer="false" vary-by-developer-groups="false" />',
      '<cache-lookup> <cache-lookup> in inbound is not one of',
    ],
    [
      'a rate limit counted on the response',
      '<rate-limit-by-key calls="1" renewal-period="60" counter-key="k" increment-condition="@(context.Response.StatusCode == 200)" />',
      '<rate-limit-by-key> its "increment-condition" attribute',
    ],
    [
      'a quota on bandwidth',
      '<quota-by-key calls="5" bandwidth="100" renewal-period="300" counter-key="k" />',
      '<quota-by-key> its "bandwidth" attribute',
    ],
    [
      'an expression that reads the body',
      '<choose><when condition="@(context.Request.Body.As&lt;string&gt;(preserveContent: true) == &quot;&quot;)"><set-variable name="v" value="1" /></when></choose>',
      '<choose> it reads the request body',
    ],
  ])('refuses %s', (_, xml, reason) => {
    expect(reasons(xml)[0]).toContain(reason);
  });

  it('refuses any outbound element, and follow-redirects, but lets on-error shape a refusal', () => {
    const pipeline = pipelineOf(
      policies({
        backend: '<forward-request follow-redirects="true" />',
        outbound: '<base /><set-status code="201" />',
        'on-error': '<base /><set-body>{"failed":true}</set-body><set-status code="500" />',
      }),
    );
    expect(headerOnlyViolations(pipeline).map((v) => `${v.section} <${v.use.element}>`)).toEqual([
      'backend <forward-request>',
      'outbound <set-status>',
    ]);
  });

  it('names where the element is written, at whichever scope', () => {
    const api = compileAt(
      policies({
        inbound: '<base />\n<cache-lookup vary-by-developer="false" vary-by-developer-groups="false" />',
      }),
      'api',
    );
    const [violation] = headerOnlyViolations(buildPipeline({ api }));
    expect(headerOnlyDiagnostic(violation!)).toMatchObject({
      file: 'api.xml',
      line: 3,
      column: 1,
      code: 'needs-ext-proc',
    });
  });
});
