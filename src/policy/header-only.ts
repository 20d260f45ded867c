/**
 * Which pipelines can run on a request's headers alone, answered once: allow (with request headers changed),
 * or refuse with a response. That is all Envoy's ext_authz filter lets its service do — it never sends the body,
 * never shows the backend's response, and ends its part of the request with the answer — so the engine serves
 * ext_authz (`portcullis engine --authz`) only for a configuration whose every pipeline passes this check.
 *
 * One rule per element that qualifies, by section; an element not in the table needs ext_proc. A rule returns why
 * this use of the element needs ext_proc (an attribute that waits for the response), or nothing.
 */
import type { Diagnostic } from '../diagnostic.js';
import type { ElementUse } from './document.js';
import type { Pipeline, SectionUse } from './pipeline.js';
import type { Section } from './schema.js';

type Rule = (use: ElementUse) => string | undefined;

const always: Rule = () => undefined;

/** set-header/set-body/set-status on the request, or on the response return-response builds, not the backend's. */
const notOnTheResponse: Rule = (use) =>
  use.target === 'response' ? "it changes the backend's response, which ext_authz never sees" : undefined;

/** set-body builds a response (return-response) or a side request (send-request), never the client's request. */
const notOnTheRequestBody: Rule = (use) =>
  use.target === 'request'
    ? 'it replaces the request body, which ext_authz cannot change'
    : notOnTheResponse(use);

/** rate-limit(-by-key), quota(-by-key): counted as the call arrives, with nothing to add to the response. */
function countedOnArrival(...responseAttributes: string[]): Rule {
  return (use) => {
    const named = [...Object.keys(use.attributes), ...use.childAttributes];
    const found = responseAttributes.find((name) => named.includes(name));
    return found === undefined
      ? undefined
      : `its "${found}" attribute works on the backend's response, which ext_authz never sees`;
  };
}

const rateLimitRule = countedOnArrival(
  'increment-condition',
  'remaining-calls-header-name',
  'total-calls-header-name',
);
const quotaRule = countedOnArrival('increment-condition', 'bandwidth');

/** Elements that decide, compute or make calls of their own from the request's headers. */
const headerElements: Readonly<Record<string, Rule>> = {
  'authentication-basic': always,
  'cache-lookup-value': always,
  'cache-remove-value': always,
  'cache-store-value': always,
  'check-header': always,
  choose: always,
  'emit-metric': always,
  'include-fragment': always,
  'ip-filter': always,
  'log-to-eventhub': always,
  'mock-response': always,
  quota: quotaRule,
  'quota-by-key': quotaRule,
  'rate-limit': rateLimitRule,
  'rate-limit-by-key': rateLimitRule,
  'return-response': always,
  'rewrite-uri': always,
  'send-one-way-request': always,
  'send-request': always,
  'set-backend-service': always,
  'set-body': notOnTheRequestBody,
  'set-header': notOnTheResponse,
  'set-method': always,
  'set-query-parameter': always,
  'set-status': notOnTheResponse,
  'set-variable': always,
  trace: always,
  'validate-client-certificate': always,
  'validate-jwt': always,
  wait: always,
};

const rules: Readonly<Record<Section, Readonly<Record<string, Rule>>>> = {
  inbound: headerElements,
  backend: {
    choose: always,
    // Following redirects means the engine reads the backend's answer.
    'forward-request': (use) =>
      use.attributes['follow-redirects'] !== undefined && use.attributes['follow-redirects'] !== 'false'
        ? 'its "follow-redirects" attribute works on the backend\'s response, which ext_authz never sees'
        : undefined,
    'set-backend-service': always,
    'set-header': notOnTheResponse,
    'set-query-parameter': always,
    'set-variable': always,
    trace: always,
  },
  // Nothing: outbound runs on the backend's response.
  outbound: {},
  // on-error runs for an inbound refusal, whose answer ext_authz carries; a backend failure is Envoy's own reply.
  'on-error': {
    choose: always,
    'emit-metric': always,
    'include-fragment': always,
    'log-to-eventhub': always,
    'mock-response': always,
    'return-response': always,
    'set-body': always,
    'set-header': always,
    'set-status': always,
    'set-variable': always,
    trace: always,
  },
};

const sectionReasons: Readonly<Partial<Record<Section, string>>> = {
  outbound: "outbound runs on the backend's response, which ext_authz never sees",
};

/** One element that keeps a pipeline from running under ext_authz. */
export interface HeaderOnlyViolation {
  readonly use: ElementUse;
  readonly section: Section;
  readonly reason: string;
}

/** Every element of the pipeline that needs more than the request headers; empty when ext_authz can run it. */
export function headerOnlyViolations(pipeline: Pipeline): HeaderOnlyViolation[] {
  const violations: HeaderOnlyViolation[] = [];
  for (const section of Object.keys(rules) as Section[]) {
    for (const use of pipeline.uses[section]) {
      const reason = useReason(section, use);
      if (reason !== undefined) violations.push({ use, section, reason });
    }
  }
  return violations;
}

function useReason(section: Section, use: SectionUse): string | undefined {
  const rule = rules[section][use.element];
  if (rule === undefined)
    return (
      sectionReasons[section] ?? `<${use.element}> in ${section} is not one of the elements ext_authz can run`
    );
  const own = rule(use);
  if (own !== undefined) return own;
  // An expression anywhere in the statement (a `when` condition, a value) may read a body.
  if (use.statementNeeds.requestBody) return 'it reads the request body, which ext_authz does not send';
  // In on-error the response is the refusal the engine builds, body and all, never the backend's.
  if (use.statementNeeds.responseBody && section !== 'on-error')
    return "it reads the backend's response, which ext_authz never sees";
  return undefined;
}

/** As every load-time problem is reported: `file:line:col: <element> in section needs ext_proc: reason`. */
export function headerOnlyDiagnostic(violation: HeaderOnlyViolation): Diagnostic<'needs-ext-proc'> {
  const { use, section, reason } = violation;
  return {
    file: use.file,
    line: use.line,
    column: use.column,
    code: 'needs-ext-proc',
    message: `<${use.element}> in ${section} needs ext_proc: ${reason}`,
  };
}
