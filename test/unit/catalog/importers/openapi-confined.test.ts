import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportRefusedError } from '../../../../src/catalog/importers/model.js';
import { importer } from '../../../../src/catalog/importers/openapi.js';

const fixtures = path.join(import.meta.dirname, '../../../fixtures/catalog', 'openapi');
const scratch = mkdtempSync(path.join(tmpdir(), 'portcullis-openapi-confined-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** An OpenAPI 3.1 definition whose response schema sets `$id`: a relative `$ref` below it resolves against it. */
const withId = (id: string) => `openapi: 3.1.0
info: { title: t, version: "1" }
paths:
  /items:
    get:
      operationId: get-items
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                $id: ${id}
                type: object
                properties:
                  owner: { $ref: 'item.yaml' }
`;

async function refusal(promise: Promise<unknown>): Promise<ImportRefusedError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ImportRefusedError);
  return error as ImportRefusedError;
}

/**
 * Issue 29: a definition from an artifact folder (`root`) is read by @readme/openapi-parser, whose resolvers read any
 * file and fetch any URL. The walk of the written `$ref`s refuses the plain ones (the CLI tests cover those); these
 * reach the parser's resolvers another way — through an `$id` — and the resolvers themselves are confined.
 */
describe('OpenAPI import confined to a folder', () => {
  it('keeps references between files inside the folder', async () => {
    const root = mkdtempSync(path.join(scratch, 'inside-'));
    cpSync(fixtures, root, { recursive: true });
    const api = await importer.importFile(path.join(root, 'courses-3.0.yaml'), { urlSuffix: 'api', root });
    const list = api.operations.find((operation) => operation.id === 'listCourses');
    expect(list?.responses[0]?.schema).toMatchObject({ type: 'array', items: { required: ['id', 'title'] } });
  });

  it('does not fetch a URL an $id leads a reference to', async () => {
    const root = mkdtempSync(path.join(scratch, 'id-url-'));
    writeFileSync(path.join(root, 'spec.yaml'), withId('https://schemas.example.com/'));
    const error = await refusal(
      importer.importFile(path.join(root, 'spec.yaml'), { urlSuffix: 'api', serviceUrl: 'https://b', root }),
    );
    expect(error.problems).toEqual([
      {
        file: 'https://schemas.example.com/item.yaml',
        message: 'a URL: a specification from an artifact folder may refer only to files inside the folder',
      },
    ]);
  });

  it('does not read a file outside the folder an $id leads a reference to', async () => {
    const folder = mkdtempSync(path.join(scratch, 'id-file-'));
    const root = path.join(folder, 'artifacts');
    cpSync(fixtures, root, { recursive: true });
    writeFileSync(path.join(folder, 'item.yaml'), 'type: string\n');
    writeFileSync(path.join(root, 'spec.yaml'), withId(`file://${folder}/`));
    const error = await refusal(
      importer.importFile(path.join(root, 'spec.yaml'), { urlSuffix: 'api', serviceUrl: 'https://b', root }),
    );
    expect(error.problems).toEqual([
      {
        file: path.join(folder, 'item.yaml'),
        message: `outside the artifact folder ${root}: a specification from an artifact folder may refer only to files inside the folder`,
      },
    ]);
  });
});
