import { type CompileContext, defineElement } from '../element.js';
import { bodyText, messageOf } from '../message.js';
import type { PolicyNode } from '../node.js';
import type { RunContext } from '../runtime.js';
import { bool, elements, GPAO, int, oneOf, str } from '../schema.js';
import { positionOf } from '../shared/json-position.js';
import { declaredResponse } from '../shared/mock-content.js';
import { requestContentOf, responseContentOf } from '../shared/operation-definition.js';
import {
  type Action,
  action,
  actionGetter,
  apiSchemaError,
  definitionName,
  INTERNAL_ERROR,
  schemaErrorText,
  settle,
  type ValidationError,
  validatesRequest,
  validatorOf,
} from '../shared/validation.js';
import {
  loadXmlValidator,
  qualifiedName,
  registrySchemaSet,
  validateXml,
  type XmlName,
  type XmlSchemaSet,
} from '../shared/xml-schema.js';

/** The largest `max-size` the documentation allows: 100 KB. */
const MAX_SIZE = 102_400;

/** A media type without its parameters, lower-cased: content types compare case-insensitively. */
const mediaType = (value: string | undefined): string => (value ?? '').split(';')[0]!.trim().toLowerCase();

const CONTENT_ATTRIBUTES = {
  type: str({ expression: false }),
  'validate-as': oneOf(['json', 'xml', 'soap'], { required: true, expression: false }),
  'schema-id': str({ expression: false }),
  'schema-ref': str({ expression: false }),
  action: action({ required: true }),
  'allow-additional-properties': bool({ expression: false }),
} as const;

/**
 * Validates the size and the content of the request body (inbound) or the response body (outbound, on-error)
 * against the JSON schemas of the operation's definition, the XML schemas of the API's WSDL, or a schema of the
 * registry (learn.microsoft.com/azure/api-management/validate-content-policy). XML and SOAP bodies are validated by
 * libxml2 (shared/xml-schema.ts), loaded only when a policy validates XML.
 */
export const validateContent = defineElement({
  name: 'validate-content',
  summary:
    "Validates the body's size, content type and JSON, XML or SOAP content against the operation's definition or a registered schema (detect, prevent or ignore).",
  sections: ['inbound', 'outbound', 'on-error'],
  scopes: GPAO,
  body: 'read',
  attributes: {
    'unspecified-content-type-action': action({ required: true }),
    // The page (2024 revision) allows expressions here, as in the two actions.
    'max-size': int({ required: true, min: 0, max: MAX_SIZE }),
    'size-exceeded-action': action({ required: true }),
    'errors-variable-name': str({ expression: false }),
  },
  content: elements(
    {
      name: 'content-type-map',
      max: 1,
      attributes: {
        'any-content-type-value': str({ expression: false }),
        'missing-content-type-value': str({ expression: false }),
      },
      content: elements({
        name: 'type',
        attributes: {
          from: str({ expression: false }),
          when: bool(),
          to: str({ required: true, expression: false }),
        },
      }),
    },
    {
      name: 'content',
      attributes: CONTENT_ATTRIBUTES,
    },
  ),
  compile(node, c) {
    const inbound = validatesRequest(c);
    const unspecifiedAction = actionGetter(
      node.getter('unspecified-content-type-action'),
      'validate-content/@unspecified-content-type-action',
    );
    const sizeAction = actionGetter(
      node.getter('size-exceeded-action'),
      'validate-content/@size-exceeded-action',
    );
    const maxSizeGetter = node.getter('max-size');
    /** An expression's value is checked when it runs, as a literal is at load (a TypeError: the runner's invalid value). */
    const maxSizeOf = (run: RunContext): number => {
      const value = maxSizeGetter(run);
      if (!Number.isInteger(value) || value < 0 || value > MAX_SIZE)
        throw new TypeError(
          `validate-content/@max-size must be an integer from 0 to ${MAX_SIZE}, got ${value}`,
        );
      return value;
    };
    const errorsVariable = node.literal('errors-variable-name');
    const map = node.child('content-type-map');
    const mappings = (map?.childrenNamed('type') ?? []).map((type) => {
      const from = type.literal('from');
      const when = type.getter('when');
      if ((from === undefined) === (when === undefined))
        c.error(
          type,
          'attribute',
          'validate-content/content-type-map/type takes from or when, got both or neither',
        );
      return {
        from: from === undefined ? undefined : mediaType(from),
        when,
        to: mediaType(type.literal('to')),
      };
    });
    const anyType = map?.literal('any-content-type-value');
    const missingType = map?.literal('missing-content-type-value');
    const contents = node.childrenNamed('content').map((content) => compileContent(content, c));
    const Message = inbound ? 'Request' : 'Response';
    const bodyType = inbound ? 'RequestBody' : 'ResponseBody';
    const hidden = (details: string) => (inbound ? details : INTERNAL_ERROR);

    const effectiveType = typeMapper(mappings, anyType, missingType);

    return (run) => {
      const found = check(run);
      if (!(found instanceof Promise)) {
        settle(run, 'validate-content', inbound, errorsVariable, found);
        return 'next';
      }
      return found.then((errors) => {
        settle(run, 'validate-content', inbound, errorsVariable, errors);
        return 'next' as const;
      });
    };

    /** What the body breaks; a promise only when an XML schema validates it (libxml2 may still be loading). */
    function check(run: RunContext): ValidationError[] | Promise<ValidationError[]> {
      const target = messageOf(run, c.target);
      const errors: ValidationError[] = [];
      const body = target.body?.bytes ?? Buffer.alloc(0);
      // The documentation checks max-size against Content-Length; a body without one (chunked) by its length.
      const declaredLength = Number(target.headers.getJoined('Content-Length'));
      const size = Number.isFinite(declaredLength) && declaredLength > 0 ? declaredLength : body.length;
      const maxSize = maxSizeOf(run);
      if (size > maxSize) {
        const details = `${Message}'s body is ${size} bytes long and it exceeds the configured limit of ${maxSize} bytes.`;
        errors.push({
          name: null,
          type: bodyType,
          rule: 'SizeLimit',
          details,
          publicResponse: inbound
            ? `Request's body is ${size} bytes long and it exceeds the limit of ${maxSize} bytes.`
            : INTERNAL_ERROR,
          action: sizeAction(run),
        });
      }
      const definition = run.operationDefinition;
      if (definition === undefined) {
        errors.push(apiSchemaError(unspecifiedAction(run)));
        return errors;
      }
      const declared = inbound
        ? requestContentOf(definition)
        : responseContentOf(declaredResponse(definition.responses, run.context.response?.statusCode ?? 200));
      const type = effectiveType(run, mediaType(target.headers.getJoined('Content-Type')));
      // A content element with a schema of the registry specifies its content type itself.
      const fromRegistry = contents.find((entry) => entry.schemaId !== undefined && entry.type === type);
      const specified =
        fromRegistry !== undefined
          ? { contentType: type, schema: fromRegistry.registered }
          : declared.find((content) => mediaType(content.contentType) === type);
      if (
        fromRegistry !== undefined &&
        fromRegistry.registered === undefined &&
        fromRegistry.registeredXml === undefined
      ) {
        // Compiled without the configuration's registry (a policy checked alone): nothing to validate against.
        errors.push(apiSchemaError(fromRegistry.action(run)));
        return errors;
      }
      if (specified === undefined) {
        // A message without a body has no content type to speak of.
        if (body.length > 0 || type !== '') {
          const details = `Unspecified content type ${type} is not allowed.`;
          errors.push({
            name: type,
            type: bodyType,
            rule: 'Unspecified',
            details,
            publicResponse: hidden(details),
            action: unspecifiedAction(run),
          });
        }
        return errors;
      }
      // An empty `type` applies to every content type the definition specifies.
      const content =
        fromRegistry ??
        contents.find((entry) => entry.type === type) ??
        contents.find((entry) => entry.type === '');
      if (content === undefined) return errors;
      const contentAction: Action = content.action(run);
      if (contentAction === 'ignore') return errors;
      const text = bodyText(target);
      const add = (error: ContentError | undefined): ValidationError[] => {
        if (error !== undefined) errors.push({ type: bodyType, ...error, action: contentAction });
        return errors;
      };
      if (content.as === 'json')
        return add(
          specified.schema === undefined
            ? undefined
            : checkJson(inbound, text, specified.schema, content.additional, type),
        );
      const schemas = content.registeredXml ?? definition.xmlSchemas;
      if (schemas === undefined) return add(NO_DEFINITIONS);
      // Against the API's own definition a SOAP or XML body must also be the operation's element.
      const soap = definition.soap;
      const expected =
        content.registeredXml !== undefined ? undefined : inbound ? soap?.bodyElement : soap?.responseElement;
      return checkXml(inbound, text, { schemas, soap: content.as === 'soap', expected }, type).then(add);
    }
  },
});

/** The content type validation uses: content-type-map (its `type`s, then any, then missing) applied to the message's own. */
function typeMapper(
  mappings: readonly {
    from: string | undefined;
    when: ((run: RunContext) => boolean) | undefined;
    to: string;
  }[],
  anyType: string | undefined,
  missingType: string | undefined,
): (run: RunContext, sent: string) => string {
  return (run, sent) => {
    for (const mapping of mappings) {
      if (mapping.from !== undefined ? mapping.from === sent : mapping.when!(run)) return mapping.to;
    }
    if (anyType !== undefined) return mediaType(anyType);
    if (sent === '' && missingType !== undefined) return mediaType(missingType);
    return sent;
  };
}

/** A content error as the checks find it: the message's body type unless it is about the API's schema. */
type ContentError = Omit<ValidationError, 'type' | 'action'> & { readonly type?: 'ApiSchema' };

/** The first way a JSON body breaks its schema, as the documented IncorrectMessage (or ValidationException) error. */
function checkJson(
  inbound: boolean,
  text: string,
  schema: Readonly<Record<string, unknown>>,
  additional: boolean | undefined,
  type: string,
): ContentError | undefined {
  const message = inbound ? 'request' : 'response';
  const name = definitionName(schema, `${message} body`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return {
      name: type,
      rule: 'ValidationException',
      details: `Body of the ${message} cannot be validated for the content type ${type}.\n\n${(err as Error).message}`,
      publicResponse: INTERNAL_ERROR,
    };
  }
  const validate = validatorOf(schema, additional);
  if (validate(value)) return undefined;
  const error = validate.errors?.[0];
  const at = positionOf(text, error?.instancePath ?? '');
  const details =
    `Body of the ${message} does not conform to the definition ${name}, which is associated with the content type ${type}.` +
    `\n\n${schemaErrorText(validate.errors)} Line: ${at.line}, Position: ${at.position}`;
  return {
    name: type,
    rule: 'IncorrectMessage',
    details,
    publicResponse: inbound ? details : INTERNAL_ERROR,
  };
}

/** The documented ApiSchema error when there is no XML schema to validate against. */
const NO_DEFINITIONS: ContentError = {
  name: null,
  type: 'ApiSchema',
  rule: null,
  details: "API's schema does not specify definitions.",
  publicResponse: INTERNAL_ERROR,
};

const qualified = (name: XmlName): string => qualifiedName(name.namespace, name.localName);

/**
 * The first way an XML body (or a SOAP envelope's payload) breaks the XML schemas, as the documented
 * IncorrectMessage or ValidationException error; a schema set that does not compile is the API's schema that
 * "could not be resolved". `expected`: the operation's element, when validating against the API's definition.
 */
async function checkXml(
  inbound: boolean,
  text: string,
  xml: { schemas: XmlSchemaSet; soap: boolean; expected: XmlName | undefined },
  type: string,
): Promise<ContentError | undefined> {
  const message = inbound ? 'request' : 'response';
  const name = xml.expected?.localName ?? xml.schemas.name;
  const outcome = await validateXml(xml.schemas, text, xml.soap);
  if (outcome.kind === 'unresolved') {
    const { action: _, ...error } = apiSchemaError('detect');
    return { ...error, type: 'ApiSchema', details: `${error.details}\n\n${outcome.message}` };
  }
  // A definition the schemas do not declare, once they compile (an import they fail to load is the reason above).
  if (xml.expected !== undefined && xml.schemas.declares?.has(qualified(xml.expected)) === false)
    return {
      name: type,
      rule: 'MissingDefinition',
      details: `API's schema does not contain definition ${name}, which is associated with the content type ${type}.`,
      publicResponse: INTERNAL_ERROR,
    };
  if (outcome.kind === 'unreadable')
    return {
      name: type,
      rule: 'ValidationException',
      details: `Body of the ${message} cannot be validated for the content type ${type}.\n\n${outcome.message}`,
      publicResponse: INTERNAL_ERROR,
    };
  const found = outcome.element;
  let reason: string | undefined;
  if (
    xml.expected !== undefined &&
    (found === undefined ||
      found.namespace !== xml.expected.namespace ||
      found.localName !== xml.expected.localName)
  )
    reason =
      `The element ${found === undefined ? '(none: the SOAP Body is empty)' : qualified(found)} is not the operation's ${qualified(xml.expected)}.` +
      ` Line: ${found?.line ?? 0}, Position: 0`;
  else if (outcome.kind === 'invalid')
    reason = `${outcome.message} Line: ${outcome.line}, Position: ${outcome.position}`;
  if (reason === undefined) return undefined;
  const details = `Body of the ${message} does not conform to the definition ${name}, which is associated with the content type ${type}.\n\n${reason}`;
  return {
    name: type,
    rule: 'IncorrectMessage',
    details,
    publicResponse: inbound ? details : INTERNAL_ERROR,
  };
}

/** The value a local JSON pointer (`#/components/schemas/address`) names in `document`, or undefined. */
function pointerTarget(document: unknown, ref: string): unknown {
  let at: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const step = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, step)) return undefined;
    at = (at as Record<string, unknown>)[step];
  }
  return at;
}

/**
 * A schema that validates against the part `ref` names of a registered schema, the references inside that part still
 * resolved against the whole document (it keeps its own base URI).
 */
function referenced(
  id: string,
  document: Readonly<Record<string, unknown>>,
  ref: string,
): Readonly<Record<string, unknown>> {
  const base = `urn:portcullis:schemas:${encodeURIComponent(id)}`;
  return { $ref: `${base}${ref}`, $defs: { registered: { ...document, $id: base } } };
}

/**
 * A `content` element: its content type, engine, action, and the registry's schema when it names one (checked at
 * load: a JSON schema for `json`, an XML schema for `xml` and `soap`).
 */
function compileContent(content: PolicyNode<typeof CONTENT_ATTRIBUTES>, c: CompileContext) {
  const as = content.literal('validate-as') as 'json' | 'xml' | 'soap';
  const schemaId = content.literal('schema-id');
  const schemaRef = content.literal('schema-ref');
  if (schemaRef !== undefined && schemaId === undefined)
    c.error(content, 'attribute', 'validate-content/content/@schema-ref needs schema-id, got none');
  if (as !== 'json') {
    // Started now, so the first request that validates XML does not wait for libxml2 to load.
    loadXmlValidator().catch(() => {});
    if (schemaRef !== undefined)
      c.error(
        content,
        'attribute',
        `validate-content/content/@schema-ref applies to JSON schemas only; with validate-as="${as}" any top-level element of the XML schema may be the root, got schema-ref="${schemaRef}"`,
      );
  }
  let registered: Readonly<Record<string, unknown>> | undefined;
  let registeredXml: XmlSchemaSet | undefined;
  if (schemaId !== undefined && as !== 'json') {
    const xml = c.xmlSchemas?.get(schemaId);
    if (xml !== undefined) registeredXml = registrySchemaSet(schemaId, c.xmlSchemas!);
    else if (c.xmlSchemas !== undefined || c.schemas !== undefined)
      c.error(
        content,
        'attribute',
        `validate-content/content/@schema-id must name an XML schema (XSD) of the configuration's schemas with validate-as="${as}", got "${schemaId}" (XML schemas: ${[...(c.xmlSchemas?.keys() ?? [])].join(', ') || 'none'})`,
      );
  } else if (schemaId !== undefined) {
    registered = c.schemas?.get(schemaId);
    if (registered === undefined && c.xmlSchemas?.has(schemaId))
      c.error(
        content,
        'attribute',
        `validate-content/content/@schema-id "${schemaId}" is an XML schema; validate-as="json" needs a JSON schema`,
      );
    else if (c.schemas !== undefined && registered === undefined)
      c.error(
        content,
        'attribute',
        `validate-content/content/@schema-id must name a schema of the configuration's schemas, got "${schemaId}" (known: ${[...c.schemas.keys()].join(', ') || 'none'})`,
      );
    if (registered !== undefined && schemaRef !== undefined) {
      if (!schemaRef.startsWith('#/') || pointerTarget(registered, schemaRef) === undefined)
        c.error(
          content,
          'attribute',
          `validate-content/content/@schema-ref must be a local reference into schema "${schemaId}" (#/…), got "${schemaRef}"`,
        );
      else registered = referenced(schemaId, registered, schemaRef);
    }
  }
  return {
    as,
    schemaId,
    registered,
    registeredXml,
    type: mediaType(content.literal('type')),
    action: actionGetter(content.getter('action'), 'validate-content/content/@action'),
    // For a JSON schema only: the documentation gives XML schemas no runtime override.
    additional: content.literal('allow-additional-properties'),
  };
}
