import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { runCli } from '../../processes/cli.js';

const packageVersion = (
  (await import('../../../package.json', { with: { type: 'json' } })) as { default: { version: string } }
).default.version;

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

/**
 * Issue 13: `portcullis validate missing.xml` and a malformed `--named-values` file printed a Node stack trace. Every
 * command answers bad input with one clear line and exit status 1, never a stack trace. Each case is a command of its
 * own: they run side by side, queued by runCli to the machine's cores (a case's time includes its wait in line).
 */
describe.concurrent('portcullis on bad input', { timeout: 60_000 }, () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bad-input-'));
    const files: Record<string, string> = {
      'bad.yaml': 'a: [\n',
      'bad.json': '{"a": ',
      'list.yaml': '- a\n- b\n',
      'bad.xml': '<policies><inbound>',
      'good.xml':
        '<policies><inbound /><backend><forward-request /></backend><outbound /><on-error /></policies>',
      'broken-gateway.yaml': 'apis: [\n',
      // The certificate its backend is given is not there: refused before anything starts, where it is named.
      'missing-certificate.yaml': [
        'apis: [{ id: courses, urlSuffix: courses, serviceUrl: "https://127.0.0.1:1" }]',
        'tls:',
        '  certificates: { partner: { certificate: nowhere.pem, key: nowhere.key } }',
        '  backends: { courses: { certificateId: partner } }',
      ].join('\n'),
    };
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(directory, name), text);
  });

  // [what, arguments, where the line is, what it says]
  const cases: readonly [string, readonly string[], 'stderr' | 'stdout', RegExp][] = [
    [
      'validate: a missing policy file',
      ['validate', 'missing.xml'],
      'stdout',
      /^missing\.xml:1:1: cannot read the file \(ENOENT\)$/,
    ],
    [
      'validate: malformed YAML named values',
      ['validate', '--named-values', 'bad.yaml', 'good.xml'],
      'stderr',
      /^bad\.yaml:2:1: Flow sequence/,
    ],
    [
      'validate: malformed JSON named values',
      ['validate', '--named-values', 'bad.json', 'good.xml'],
      'stderr',
      /^bad\.json:1:7: Flow map must end with a \}$/,
    ],
    [
      'validate: named values that are not a map',
      ['validate', '--named-values', 'list.yaml', 'good.xml'],
      'stderr',
      /^list\.yaml:1:1: must be a map, got an array$/,
    ],
    [
      'validate: a missing named values file',
      ['validate', '--named-values', 'missing.yaml', 'good.xml'],
      'stderr',
      /^portcullis validate: --named-values missing\.yaml: cannot read the file \(ENOENT\)$/,
    ],
    [
      'an unknown command',
      ['frobnicate'],
      'stderr',
      /^portcullis: unknown command "frobnicate" \(portcullis --help lists them\)$/,
    ],
    [
      'an unknown flag',
      ['validate', '--frobnicate', 'good.xml'],
      'stderr',
      /^portcullis validate: Unknown option '--frobnicate' \(portcullis validate --help shows the usage\)$/,
    ],
    [
      'up: a missing configuration',
      ['up', '--config', 'missing.yaml'],
      'stderr',
      /^portcullis up: cannot read missing\.yaml \(ENOENT\)$/,
    ],
    [
      'up: a certificate a backend uses that cannot be read',
      ['up', '--config', 'missing-certificate.yaml'],
      'stderr',
      /^\/.*\/missing-certificate\.yaml:3:\d+: tls\.certificates\.partner\.certificate: certificate file "nowhere\.pem" cannot be read \(.*\): ENOENT$/,
    ],
    [
      'envoy-config: malformed YAML',
      ['envoy-config', '--config', 'broken-gateway.yaml'],
      'stderr',
      /^broken-gateway\.yaml:2:1: /,
    ],
    [
      'engine: a bad port',
      ['engine', '--port', 'eighty'],
      'stderr',
      /^portcullis engine: --port must be a port number, got "eighty"/,
    ],
    [
      'engine: both a port and a socket',
      ['engine', '--port', '0', '--socket', '/tmp/engine.sock'],
      'stderr',
      /^portcullis engine: --port and --socket exclude each other/,
    ],
    [
      'envoy-config: an engine socket without --snippet',
      ['envoy-config', '--config', 'gateway.yaml', '--engine-socket', '/tmp/engine.sock'],
      'stderr',
      /^portcullis envoy-config: --engine-socket goes with --snippet/,
    ],
    [
      'service: a missing configuration',
      ['service', '--config', 'missing.yaml', '--port', '0', '--gateway-url', 'http://127.0.0.1:1'],
      'stderr',
      /^missing\.yaml:1:1: cannot read the file \(ENOENT\)$/,
    ],
    [
      'import: a missing definition',
      ['import', 'openapi', 'missing.json', '--suffix', 'x'],
      'stderr',
      /^missing\.json: cannot read the file \(ENOENT\)$/,
    ],
    ['import: malformed XML', ['import', 'wsdl', 'bad.xml', '--suffix', 'x'], 'stderr', /^bad\.xml:1:\d+: /],
    [
      'hash-password: an unknown flag',
      ['hash-password', '--echo'],
      'stderr',
      /^portcullis hash-password: Unknown option '--echo'/,
    ],
  ];

  it.for(cases)('%s: one line, exit 1, no stack trace', async ([, args, stream, expected], { expect }) => {
    const outcome = await runCli(args, { cwd: directory });
    expect(outcome.status).toBe(1);
    const output = `${outcome.stdout}${outcome.stderr}`;
    expect(output).not.toMatch(/^\s+at /m);
    expect(lines(output)).toHaveLength(1);
    expect(lines(outcome[stream])[0]).toMatch(expected);
  });

  it('shows the stack with PORTCULLIS_DEBUG=1', async ({ expect }) => {
    const outcome = await runCli(['validate', '--named-values', 'missing.yaml', 'good.xml'], {
      cwd: directory,
      env: { PORTCULLIS_DEBUG: '1' },
    });
    expect(outcome.status).toBe(1);
    expect(lines(outcome.stderr)[0]).toBe(
      'portcullis validate: --named-values missing.yaml: cannot read the file (ENOENT)',
    );
    expect(outcome.stderr).toMatch(/^\s+at /m);
  });

  it.for(['--version', '-V'])('%s prints the version from package.json', async (flag, { expect }) => {
    const outcome = await runCli([flag], { cwd: directory });
    expect(outcome).toEqual({ status: 0, stdout: `portcullis ${packageVersion}\n`, stderr: '' });
  });
});
