/**
 * `portcullis test --init`: a starter test file for each API of a configuration, one case per operation — the
 * request the operation takes, the backend stubbed with a 200, and the status expected — to edit into real tests.
 */
import path from 'node:path';
import { stringify } from 'yaml';
import type { LoadedConfig } from '../config/load.js';

export interface StarterFile {
  readonly file: string;
  readonly text: string;
}

export function starterTests(loaded: LoadedConfig): StarterFile[] {
  return loaded.config.apis.map((api) => {
    const file = path.join(loaded.directory, `${api.id}.policy-test.yaml`);
    const cases = api.operations.map((operation) => {
      const id = operation.id ?? `${operation.method} ${operation.urlTemplate}`;
      const parameters = [...operation.urlTemplate.matchAll(/\{\*?([^}]+)\}/g)].map((m) => m[1]!);
      return {
        name: `${id} reaches the backend`,
        api: api.id,
        operation: id,
        ...(parameters.length > 0
          ? { request: { parameters: Object.fromEntries(parameters.map((name) => [name, '1'])) } }
          : {}),
        stubs: { backend: { status: 200, body: { ok: true } } },
        expect: { status: 200 },
      };
    });
    const header = [
      `# Starter tests for the API "${api.id}" (portcullis test --init). Run: portcullis test ${path.basename(file)}`,
      '# Each case sends one request through the compiled policies with the backend stubbed; see the README',
      '# ("Testing policies") for the request, context, stubs and expectations a case may give.',
    ].join('\n');
    const config = path.relative(loaded.directory, loaded.file) || path.basename(loaded.file);
    return { file, text: `${header}\n${stringify({ config, cases }, { lineWidth: 120 })}` };
  });
}
