import type { StringValuesMap } from '../../expr/index.js';
import { defineElement } from '../element.js';
import type { RunContext } from '../runtime.js';
import { ALL_SCOPES, elements, str } from '../schema.js';
import type { DeclaredParameter, OperationDefinition } from '../shared/operation-definition.js';
import { checkParameter, type ParameterKind } from '../shared/parameter-check.js';
import {
  type Action,
  action,
  actionGetter,
  apiSchemaError,
  settle,
  type ValidationError,
} from '../shared/validation.js';

const PARAMETER = {
  name: 'parameter',
  attributes: { name: str({ required: true, expression: false }), action: action({ required: true }) },
} as const;

/**
 * Headers Envoy adds on its way to the engine: the client did not send them, so they are never "unspecified"
 * (a difference the coverage page and docs/differences.md list: API Management sees only the client's).
 */
const ADDED_BY_ENVOY = /^(?:x-envoy-.*|x-forwarded-(?:for|proto)|x-request-id)$/i;

interface Location {
  readonly kind: ParameterKind;
  /** The error's Type. */
  readonly type: 'QueryParameter' | 'PathParameter' | 'RequestHeader';
  readonly declared: (definition: OperationDefinition) => readonly DeclaredParameter[];
  /** The values the request carries under a name. */
  readonly values: (run: RunContext, name: string) => readonly string[] | undefined;
  /** Every name the request carries; undefined where nothing can be unspecified (the path). */
  readonly sent?: (run: RunContext) => readonly string[];
  readonly caseInsensitive: boolean;
}

const queryOf = (run: RunContext): StringValuesMap => run.context.request.originalUrl.query;

const LOCATIONS = {
  headers: {
    kind: 'header',
    type: 'RequestHeader',
    declared: (d) => d.headerParameters,
    values: (run, name) => run.context.request.headers.get(name),
    sent: (run) => run.context.request.headers.names().filter((name) => !ADDED_BY_ENVOY.test(name)),
    caseInsensitive: true,
  },
  query: {
    kind: 'query parameter',
    type: 'QueryParameter',
    declared: (d) => d.queryParameters,
    values: (run, name) => queryOf(run).get(name),
    sent: (run) => queryOf(run).names(),
    caseInsensitive: false,
  },
  path: {
    kind: 'path parameter',
    type: 'PathParameter',
    declared: (d) => d.templateParameters,
    values: (run, name) => {
      const value = run.context.request.matchedParameters.get(name);
      return value === undefined ? undefined : [value];
    },
    caseInsensitive: false,
  },
} as const satisfies Record<string, Location>;

type Getter = ((run: RunContext) => Action) | undefined;

/**
 * Validates the request's header, query and path parameters against the operation's definition
 * (learn.microsoft.com/azure/api-management/validate-parameters-policy).
 */
export const validateParameters = defineElement({
  name: 'validate-parameters',
  summary: "Validates the request's header, query and path parameters against the operation's definition.",
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  oncePerSection: true,
  attributes: {
    'specified-parameter-action': action({ required: true }),
    'unspecified-parameter-action': action({ required: true }),
    'errors-variable-name': str({ expression: false }),
  },
  content: elements(
    {
      name: 'headers',
      max: 1,
      attributes: { 'specified-parameter-action': action({}), 'unspecified-parameter-action': action({}) },
      content: elements(PARAMETER),
    },
    {
      name: 'query',
      max: 1,
      attributes: { 'specified-parameter-action': action({}), 'unspecified-parameter-action': action({}) },
      content: elements(PARAMETER),
    },
    {
      name: 'path',
      max: 1,
      attributes: { 'specified-parameter-action': action({}) },
      content: elements(PARAMETER),
    },
  ),
  compile(node) {
    const label = (name: string) => `validate-parameters/@${name}`;
    const specified = actionGetter(
      node.getter('specified-parameter-action'),
      label('specified-parameter-action'),
    );
    const unspecified = actionGetter(
      node.getter('unspecified-parameter-action'),
      label('unspecified-parameter-action'),
    );
    const errorsVariable = node.literal('errors-variable-name');
    const headers = node.child('headers');
    const query = node.child('query');
    const path = node.child('path');
    const overridesOf = (
      parameters: readonly { literal(n: 'name'): string; getter(n: 'action'): unknown }[],
    ) =>
      parameters.map((parameter) => ({
        name: parameter.literal('name'),
        action: actionGetter(parameter.getter('action') as (run: RunContext) => string, 'parameter/@action'),
      }));
    /** One location's check: its actions (path has no unspecified parameters) and its parameters' overrides. */
    const locationCheck = (
      location: Location,
      name: string,
      specified: Parameters<typeof actionGetter>[0],
      unspecified: Parameters<typeof actionGetter>[0] | null,
      parameters: Parameters<typeof overridesOf>[0],
    ) => ({
      location,
      specified: actionGetter(specified, `${name}/@specified-parameter-action`),
      unspecified: (unspecified === null
        ? undefined
        : actionGetter(unspecified, `${name}/@unspecified-parameter-action`)) as Getter,
      overrides: overridesOf(parameters),
    });
    const checks = [
      locationCheck(
        LOCATIONS.headers as Location,
        'headers',
        headers?.getter('specified-parameter-action'),
        headers?.getter('unspecified-parameter-action'),
        headers?.childrenNamed('parameter') ?? [],
      ),
      locationCheck(
        LOCATIONS.query as Location,
        'query',
        query?.getter('specified-parameter-action'),
        query?.getter('unspecified-parameter-action'),
        query?.childrenNamed('parameter') ?? [],
      ),
      locationCheck(
        LOCATIONS.path as Location,
        'path',
        path?.getter('specified-parameter-action'),
        null,
        path?.childrenNamed('parameter') ?? [],
      ),
    ];

    return (run) => {
      const definition = run.operationDefinition;
      const errors: ValidationError[] =
        definition === undefined
          ? [apiSchemaError(specified(run))]
          : checks.flatMap((check) => checkLocation(run, definition, check));
      settle(run, 'validate-parameters', true, errorsVariable, errors);
      return 'next';
    };

    function checkLocation(
      run: RunContext,
      definition: OperationDefinition,
      check: (typeof checks)[number],
    ): ValidationError[] {
      const { location } = check;
      const same = (a: string, b: string) =>
        location.caseInsensitive ? a.toLowerCase() === b.toLowerCase() : a === b;
      const override = (name: string) => check.overrides.find((o) => same(o.name, name))?.action(run);
      const errors: ValidationError[] = [];
      const declared = location.declared(definition);
      for (const parameter of declared) {
        const chosen = override(parameter.name) ?? check.specified?.(run) ?? specified(run);
        if (chosen === 'ignore') continue;
        const problem = checkParameter(
          parameter,
          location.values(run, parameter.name),
          location.kind,
          'Request',
        );
        if (problem !== undefined)
          errors.push({
            name: parameter.name,
            type: location.type,
            rule: problem.rule,
            details: problem.details,
            publicResponse: problem.publicResponse,
            action: chosen,
          });
      }
      for (const name of location.sent?.(run) ?? []) {
        if (declared.some((parameter) => same(parameter.name, name))) continue;
        const chosen = override(name) ?? check.unspecified?.(run) ?? unspecified(run);
        if (chosen === 'ignore') continue;
        const details = `Unspecified ${location.kind} ${name} is not allowed.`;
        errors.push({
          name,
          type: location.type,
          rule: 'Unspecified',
          details,
          publicResponse: details,
          action: chosen,
        });
      }
      return errors;
    }
  },
});
