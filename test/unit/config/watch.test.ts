import { mkdir, mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSetWatcher, referencedFiles } from '../../../src/config/watch.js';
import { elapse, until } from '../../processes/wait.js';

async function folder(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'portcullis-reload-'));
}

function waitFor(check: () => boolean): Promise<void> {
  return until(check, 'the watcher or reloader to react', { timeoutMs: 3000, everyMs: 20 });
}

describe('referencedFiles', () => {
  it('lists the configuration, its policy files (not inline XML), fragments, schemas and definitions with their $refs', async () => {
    const dir = await folder();
    await mkdir(path.join(dir, 'defs', 'common'), { recursive: true });
    await writeFile(
      path.join(dir, 'defs', 'api.yaml'),
      'openapi: 3.0.3\npaths:\n  /x:\n    $ref: "./common/paths.yaml#/x"\ncomponents:\n  schemas:\n    A: { $ref: "#/components/schemas/B" }\n    C: { $ref: "https://example.com/s.json" }\n',
    );
    await writeFile(path.join(dir, 'defs', 'common', 'paths.yaml'), 'x: { $ref: "../api.yaml#/paths" }\n');
    await writeFile(
      path.join(dir, 'gateway.yaml'),
      [
        'policy: global.xml',
        'fragments: { f: fragments/f.xml, g: "<fragment />" }',
        'schemas: { order: schemas/order.json, inline: { type: object } }',
        'products: [{ id: p, apis: [a], policy: product.xml }]',
        'apis:',
        '  - id: a',
        '    urlSuffix: a',
        '    serviceUrl: http://127.0.0.1:1',
        '    policy: api.xml',
        '    definition: { format: openapi, file: defs/api.yaml }',
        '    operations: [{ id: get, method: GET, urlTemplate: /x, policy: ops/get.xml }]',
        '',
      ].join('\n'),
    );
    expect(await referencedFiles(path.join(dir, 'gateway.yaml'))).toEqual(
      [
        'api.xml',
        'defs/api.yaml',
        'defs/common/paths.yaml',
        'fragments/f.xml',
        'gateway.yaml',
        'global.xml',
        'ops/get.xml',
        'product.xml',
        'schemas/order.json',
      ].map((file) => path.join(dir, file)),
    );
  });

  it("names each backend entity's trusted CA file, so a changed CA bundle is noticed like a changed policy", async () => {
    const dir = await folder();
    await writeFile(
      path.join(dir, 'gateway.yaml'),
      [
        'backends:',
        '  - { id: a, url: "https://127.0.0.1:1", tls: { trustedCa: certs/a-ca.pem } }',
        '  - { id: b, url: "https://127.0.0.1:2", tls: { validateCertificateName: false } }',
        '  - { id: c, url: "http://127.0.0.1:3" }',
        '',
      ].join('\n'),
    );
    expect(await referencedFiles(path.join(dir, 'gateway.yaml'))).toEqual(
      ['certs/a-ca.pem', 'gateway.yaml'].map((file) => path.join(dir, file)),
    );
  });

  it('still names the configuration itself when it does not parse', async () => {
    const dir = await folder();
    await writeFile(path.join(dir, 'gateway.yaml'), 'apis: [\n');
    expect(await referencedFiles(path.join(dir, 'gateway.yaml'))).toEqual([path.join(dir, 'gateway.yaml')]);
  });
});

describe('FileSetWatcher', () => {
  it('reports a burst of writes once, sees a file replaced by rename, and ignores other files in the folder', async () => {
    const dir = await folder();
    const watched = path.join(dir, 'policy.xml');
    await writeFile(watched, '1');
    let changes = 0;
    const debounceMs = 100;
    const watcher = new FileSetWatcher(() => changes++, debounceMs);
    watcher.watch([watched]);
    // Showing that a change is NOT reported takes time: a few debounce periods with nothing reported.
    const pastTheDebounce = () => elapse(debounceMs * 2.5);
    try {
      await writeFile(path.join(dir, 'unrelated.txt'), 'x');
      await pastTheDebounce();
      expect(changes).toBe(0);

      for (const text of ['2', '3', '4']) await writeFile(watched, text);
      await waitFor(() => changes > 0);
      await pastTheDebounce();
      expect(changes).toBe(1);

      // An editor's atomic save: write elsewhere, rename over the watched file.
      await writeFile(path.join(dir, '.policy.xml.swp'), '5');
      await rename(path.join(dir, '.policy.xml.swp'), watched);
      await waitFor(() => changes === 2);
    } finally {
      watcher.close();
    }
  });
});
