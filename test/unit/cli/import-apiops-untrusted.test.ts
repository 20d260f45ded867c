import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, it } from 'vitest';
import { runCli } from '../../processes/cli.js';

const sample = fileURLToPath(new URL('../../fixtures/apiops/sample-artifacts', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'portcullis-apiops-untrusted-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** basic-api's specification with `extra` (YAML, indented under `components.schemas`) and a body using `Item`. */
const specification = (schema: string) =>
  [
    'openapi: 3.0.1',
    'info: { title: basic-api, version: "1.0" }',
    'paths:',
    '  /items:',
    '    get:',
    '      operationId: get-items',
    '      responses:',
    "        '200':",
    '          description: Items returned.',
    '          content:',
    '            application/json:',
    `              schema: { $ref: '${schema}' }`,
    '',
  ].join('\n');

/** The YAML "billion laughs": ten levels of nine aliases each, 10^9 strings once expanded. */
const aliasBomb = [
  'openapi: 3.0.1',
  'info: { title: basic-api, version: "1.0" }',
  'paths: {}',
  'x-laughs:',
  '  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
  ...Array.from(
    { length: 9 },
    (_, level) => `  a${level + 1}: &a${level + 1} [${Array(9).fill(`*a${level}`).join(', ')}]`,
  ),
  '',
].join('\n');

interface Case {
  /** The artifact folder (a copy of the sample artifacts) made hostile; `outside` is a folder beside it. */
  readonly make: (root: string, outside: string) => void;
  /** The one line that names the file and the rule, given the artifact folder and the folder beside it. */
  readonly line: (root: string, outside: string) => RegExp;
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const spec = 'apis/basic-api/specification.yaml';

const cases: Record<string, Case> = {
  'a policy.xml that is a symbolic link to /etc/passwd': {
    make: (root) => {
      rmSync(path.join(root, 'apis/basic-api/policy.xml'));
      symlinkSync('/etc/passwd', path.join(root, 'apis/basic-api/policy.xml'));
    },
    line: (root) =>
      new RegExp(
        `^${literal(path.join(root, 'apis/basic-api/policy.xml'))}: a symbolic link \\(to /etc/passwd\\): .*links are refused`,
        'm',
      ),
  },
  'a policy.xml that is a relative symbolic link out of the folder': {
    make: (root) => {
      rmSync(path.join(root, 'apis/basic-api/operations/get-items/policy.xml'));
      symlinkSync(
        '../../../../../outside/secret.txt',
        path.join(root, 'apis/basic-api/operations/get-items/policy.xml'),
      );
    },
    line: (root) =>
      new RegExp(
        `^${literal(path.join(root, 'apis/basic-api/operations/get-items/policy.xml'))}: a symbolic link \\(to \\.\\./\\.\\./\\.\\./\\.\\./\\.\\./outside/secret\\.txt\\)`,
        'm',
      ),
  },
  'a symbolic link inside the folder (wherever a link points, it is refused)': {
    make: (root) => {
      rmSync(path.join(root, 'policy.xml'));
      symlinkSync('apis/basic-api/policy.xml', path.join(root, 'policy.xml'));
    },
    line: (root) =>
      new RegExp(`^${literal(path.join(root, 'policy.xml'))}: a symbolic link \\(to apis/`, 'm'),
  },
  'a folder that is a symbolic link': {
    make: (root, outside) => {
      mkdirSync(path.join(outside, 'fragment'));
      writeFileSync(
        path.join(outside, 'fragment/policy.xml'),
        '<fragment><set-header name="a" /></fragment>',
      );
      rmSync(path.join(root, 'policy fragments/policyFragment2'), { recursive: true });
      symlinkSync(path.join(outside, 'fragment'), path.join(root, 'policy fragments/policyFragment2'));
    },
    line: (root) =>
      new RegExp(
        `^${literal(path.join(root, 'policy fragments/policyFragment2'))}: a symbolic link \\(to /`,
        'm',
      ),
  },
  'a named pipe in place of a policy (reading it would wait forever)': {
    make: (root) => {
      rmSync(path.join(root, 'apis/basic-api/policy.xml'));
      execFileSync('mkfifo', [path.join(root, 'apis/basic-api/policy.xml')]);
    },
    line: (root) =>
      new RegExp(
        `^${literal(path.join(root, 'apis/basic-api/policy.xml'))}: a named pipe, not a file or folder`,
        'm',
      ),
  },
  'a $ref that climbs out of the folder': {
    make: (root) => writeFileSync(path.join(root, spec), specification('../../../outside/item.yaml')),
    line: (root, outside) =>
      new RegExp(
        `^${literal(path.join(root, spec))}:12:31: \\$ref "\\.\\./\\.\\./\\.\\./outside/item\\.yaml" leads to ${literal(path.join(outside, 'item.yaml'))}, outside the artifact folder`,
        'm',
      ),
  },
  'a $ref to an absolute path': {
    make: (root, outside) =>
      writeFileSync(path.join(root, spec), specification(path.join(outside, 'item.yaml'))),
    line: (root, outside) =>
      new RegExp(
        `^${literal(path.join(root, spec))}:12:31: \\$ref "${literal(path.join(outside, 'item.yaml'))}" leads to .*outside the artifact folder`,
        'm',
      ),
  },
  'a $ref to a URL': {
    make: (root) => writeFileSync(path.join(root, spec), specification('http://127.0.0.1:9/item.yaml')),
    line: (root) =>
      new RegExp(
        `^${literal(path.join(root, spec))}:12:31: \\$ref "http://127\\.0\\.0\\.1:9/item\\.yaml" is a URL: .*may refer only to files inside the folder$`,
        'm',
      ),
  },
  'a $ref inside the folder to a file that climbs out': {
    make: (root) => {
      writeFileSync(path.join(root, spec), specification('schemas/item.yaml'));
      mkdirSync(path.join(root, 'apis/basic-api/schemas'));
      writeFileSync(
        path.join(root, 'apis/basic-api/schemas/item.yaml'),
        'type: object\nproperties:\n  owner: { $ref: "../../../../outside/item.yaml" }\n',
      );
    },
    line: (root) =>
      new RegExp(
        `^${literal(path.join(root, 'apis/basic-api/schemas/item.yaml'))}:3:18: \\$ref "\\.\\./\\.\\./\\.\\./\\.\\./outside/item\\.yaml" leads to .*outside the artifact folder`,
        'm',
      ),
  },
  'a YAML alias bomb in a specification': {
    make: (root) => writeFileSync(path.join(root, spec), aliasBomb),
    line: (root) =>
      new RegExp(
        `^${literal(path.join(root, spec))}:1:1: aliases would expand past 100 nodes \\(a YAML alias bomb\\?\\)$`,
        'm',
      ),
  },
  'a YAML alias bomb in a file a specification refers to': {
    make: (root) => {
      writeFileSync(path.join(root, spec), specification('schemas/item.yaml'));
      mkdirSync(path.join(root, 'apis/basic-api/schemas'));
      writeFileSync(path.join(root, 'apis/basic-api/schemas/item.yaml'), aliasBomb);
    },
    line: (root) =>
      new RegExp(
        `^${literal(path.join(root, 'apis/basic-api/schemas/item.yaml'))}:1:1: aliases would expand past 100 nodes`,
        'm',
      ),
  },
  'a specification larger than an artifact file may be': {
    make: (root) => {
      // Sparse: the size is there at once, without writing it.
      writeFileSync(path.join(root, spec), aliasBomb.split('x-laughs')[0]!);
      truncateSync(path.join(root, spec), 300 * 1024 * 1024);
    },
    line: (root) =>
      new RegExp(
        `^${literal(path.join(root, spec))}: 314572800 bytes, more than the \\d+ bytes an artifact file may have$`,
        'm',
      ),
  },
};

/** Every file under `folder` with its content: what "nothing was written" is checked against. */
function snapshot(folder: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out[path.relative(folder, file)] = readFileSync(file, 'utf8');
  }
  return out;
}

/**
 * Issue 29: an artifact folder comes from a pull request or an archive, and `import apiops` trusted it — a
 * policy.xml linked to /etc/passwd was copied into `policies/`, a `$ref` was read wherever it pointed, an alias
 * bomb hung the import and an oversized specification exhausted the heap. Each is refused up front: one
 * `file: message` line, exit 1, and the target folder is left as it was. The CLI runs in a child process bounded
 * by runCli's timeout (from its start), so a hang fails the case instead of the suite; the cases' own timeout also
 * covers their wait for one of runCli's slots.
 */
describe.concurrent('portcullis import apiops on an untrusted artifact folder', { timeout: 240_000 }, () => {
  for (const [name, { make, line }] of Object.entries(cases)) {
    it(`refuses ${name}, writing nothing`, async ({ expect }) => {
      const folder = mkdtempSync(path.join(scratch, 'case-'));
      const root = path.join(folder, 'artifacts');
      const outside = path.join(folder, 'outside');
      const target = path.join(folder, 'gateway');
      cpSync(sample, root, { recursive: true });
      mkdirSync(outside);
      writeFileSync(path.join(outside, 'secret.txt'), 'the secret\n');
      writeFileSync(path.join(outside, 'item.yaml'), 'type: object\n');
      mkdirSync(target);
      writeFileSync(path.join(target, 'notes.txt'), 'the target folder as it was\n');
      make(root, outside);
      const before = snapshot(target);

      const { status, stdout, stderr } = await runCli(['import', 'apiops', root], { cwd: target });

      expect(stderr).toMatch(line(root, outside));
      expect(status).toBe(1);
      expect(stdout).toBe('');
      expect(snapshot(target)).toEqual(before);
    });
  }

  it('still imports the sample artifacts themselves', async ({ expect }) => {
    const target = mkdtempSync(path.join(scratch, 'sample-'));
    const { stdout, stderr } = await runCli(['import', 'apiops', sample], { cwd: target });
    expect(stderr).not.toMatch(/symbolic link|outside the artifact folder|alias bomb/);
    expect(stdout).toMatch(/^wrote gateway\.yaml: 7 APIs/);
    expect(readFileSync(path.join(target, 'policies/apis/basic-api.xml'), 'utf8')).toContain('backend-id');
  });
});
