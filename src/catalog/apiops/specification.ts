import { stringify } from 'yaml';
import type { ApiEntry, ParameterEntry } from './model.js';

/**
 * An OpenAPI 3.0 document for an API whose operations the configuration lists without a definition file, so the
 * exported API has the specification API Management needs; importing it back gives the same operations.
 */
export function generatedSpecification(api: ApiEntry): string {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of api.operations ?? []) {
    const parameters = [
      ...(operation.templateParameters ?? []).map((parameter) => openApiParameter(parameter, 'path')),
      ...(operation.queryParameters ?? []).map((parameter) => openApiParameter(parameter, 'query')),
      ...(operation.headerParameters ?? []).map((parameter) => openApiParameter(parameter, 'header')),
    ];
    // Template parameters the configuration does not describe are still declared: OpenAPI requires them.
    for (const name of operation.urlTemplate.match(/\{([^}]+)\}/g) ?? []) {
      const bare = name.slice(1, -1);
      if (!parameters.some((parameter) => parameter.in === 'path' && parameter.name === bare)) {
        parameters.push(openApiParameter({ name: bare, required: true }, 'path'));
      }
    }
    const responses = Object.fromEntries(
      (operation.responses ?? []).map((response) => [
        response.status,
        {
          description: response.description ?? '',
          ...(response.content?.length
            ? {
                // Every media type with its example, so mock-response answers the same after a round trip.
                content: Object.fromEntries(
                  response.content.map((media) => [
                    media.contentType,
                    {
                      ...(media.schema ? { schema: media.schema } : {}),
                      ...(media.example === undefined ? {} : { example: media.example }),
                    },
                  ]),
                ),
              }
            : response.schema
              ? { content: { [response.contentType ?? 'application/json']: { schema: response.schema } } }
              : {}),
        },
      ]),
    );
    const pathItem = paths[operation.urlTemplate.split('?')[0]!] ?? {};
    pathItem[operation.method.toLowerCase()] = {
      ...(operation.id ? { operationId: operation.id } : {}),
      ...(operation.displayName ? { summary: operation.displayName } : {}),
      ...(operation.description ? { description: operation.description } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(operation.requestBody
        ? {
            requestBody: {
              content: {
                [operation.requestContentType ?? 'application/json']: { schema: operation.requestBody },
              },
            },
          }
        : {}),
      responses: Object.keys(responses).length > 0 ? responses : { '200': { description: '' } },
    };
    paths[operation.urlTemplate.split('?')[0]!] = pathItem;
  }
  return stringify({
    openapi: '3.0.1',
    info: {
      title: api.name ?? api.id,
      ...(api.description ? { description: api.description } : {}),
      version: '1.0',
    },
    servers: [{ url: api.serviceUrl }],
    paths,
  });
}

function openApiParameter(parameter: ParameterEntry, where: 'path' | 'query' | 'header') {
  return {
    name: parameter.name,
    in: where,
    ...(parameter.description ? { description: parameter.description } : {}),
    required: where === 'path' ? true : parameter.required === true,
    schema: parameter.schema ?? { type: parameter.type ?? 'string' },
  };
}
