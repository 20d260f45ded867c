import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../../src/config/gateway.js';
import { loadConfigText } from '../../../src/config/load.js';

/**
 * The schema registry (`schemas:`), API Management's Schemas that validate-content's `schema-id` names
 * (learn.microsoft.com/azure/api-management/validate-content-policy, "Schemas for content validation").
 */
const DIR = '/tmp/portcullis-schemas';
const FILE = `${DIR}/gateway.yaml`;
const load = async (text: string, files: Record<string, string> = {}) =>
  compileGateway(
    await loadConfigText(
      text,
      FILE,
      new Map([
        [FILE, text],
        ...Object.entries(files).map(([name, body]) => [`${DIR}/${name}`, body] as const),
      ]),
    ),
  );

const gateway = (schemas: string, schemaId = 'order') => `schemas:
${schemas}
apis:
  - id: a
    urlSuffix: a
    serviceUrl: http://127.0.0.1:1
    operations:
      - id: o
        method: POST
        urlTemplate: /o
        policy: |
          <policies><inbound><validate-content unspecified-content-type-action="prevent" max-size="100" size-exceeded-action="prevent"><content type="application/json" validate-as="json" schema-id="${schemaId}" action="prevent" /></validate-content></inbound><backend><forward-request /></backend><outbound /><on-error /></policies>
`;

describe('the schema registry', () => {
  it('takes a schema from a JSON file beside the configuration or written in place', async () => {
    await load(gateway('  order: order.json'), { 'order.json': '{"type":"object"}' });
    await load(gateway('  order: { type: object, required: [id] }'));
  });

  it('is a load error when a policy names a schema it does not have, or a file is not a JSON object', async () => {
    await expect(load(gateway('  order: { type: object }', 'invoice'))).rejects.toThrow(
      /schema-id must name a schema of the configuration's schemas, got "invoice" \(known: order\)/,
    );
    await expect(load(gateway('  order: order.json'), { 'order.json': '[1]' })).rejects.toThrow(
      /schemas\.order.*schema file "order\.json" must hold a JSON object/,
    );
    await expect(load(gateway('  order: order.json'), { 'order.json': '{' })).rejects.toThrow(
      /schema file "order\.json" cannot be read as JSON/,
    );
  });
});
