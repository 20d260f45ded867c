import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileText, loadConfigFile, readNamedFile } from '../../../src/config/load.js';
import { planRuntime } from '../../../src/config/plan.js';
import {
  loadRunningSnapshot,
  runningSnapshot,
  withRunningTlsFiles,
  writeRunningSnapshot,
} from '../../../src/config/snapshot.js';

const policy =
  '<policies><inbound><base /></inbound><backend><base /></backend><outbound><base /></outbound></policies>';
/** Not UTF-8: what a snapshot holding text only would have mangled. */
const certificateBytes = Buffer.from([0x30, 0x82, 0xff, 0xfe, 0x00, 0x80, 0xc3]);

describe('the running configuration snapshot', () => {
  let directory: string;
  let state: string;
  let configFile: string;

  beforeEach(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-snapshot-config-'));
    state = await mkdtemp(path.join(tmpdir(), 'portcullis-snapshot-state-'));
    configFile = path.join(directory, 'gateway.yaml');
    await writeFile(path.join(directory, 'courses.xml'), policy);
    await writeFile(path.join(directory, 'server.pem'), certificateBytes);
    await writeFile(path.join(directory, 'server.key'), 'key one');
    await writeFile(
      configFile,
      [
        'tls: { host: 127.0.0.1, port: 8443, certificate: server.pem, key: server.key }',
        'apis:',
        '  - { id: courses, urlSuffix: courses, serviceUrl: "http://127.0.0.1:1", policy: courses.xml }',
      ].join('\n'),
    );
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
    await rm(state, { recursive: true, force: true });
  });

  it('holds the configuration and the bytes of every file it names, whatever the disk says later', async () => {
    const loaded = await loadConfigFile(configFile);
    const snapshotFile = path.join(state, 'running.json');
    await writeRunningSnapshot(snapshotFile, (await runningSnapshot(loaded)).text);
    expect((await stat(snapshotFile)).mode & 0o777).toBe(0o600);

    await writeFile(path.join(directory, 'courses.xml'), '<policies><inbound>');
    await writeFile(path.join(directory, 'server.pem'), 'broken');
    await writeFile(configFile, 'notAKey: true\n');

    const running = await loadRunningSnapshot(snapshotFile);
    expect(running.file).toBe(configFile);
    expect(running.directory).toBe(directory);
    expect(running.config).toEqual(loaded.config);
    expect(fileText(running.files, path.join(directory, 'courses.xml'))).toBe(policy);
    expect(await readNamedFile(path.join(directory, 'server.pem'), running.files)).toEqual(certificateBytes);
    // A file it does not hold is read from the disk, as without a snapshot.
    await writeFile(path.join(directory, 'other.txt'), 'from disk');
    expect((await readNamedFile(path.join(directory, 'other.txt'), running.files)).toString()).toBe(
      'from disk',
    );
  });

  it("holds a WSDL definition's schemas as the import read them (a child does not read the file)", async () => {
    await writeFile(
      path.join(directory, 'calculator.wsdl'),
      await readFile(path.join(import.meta.dirname, '../../fixtures/catalog/wsdl/calculator-1.1.wsdl')),
    );
    await writeFile(
      configFile,
      'apis:\n  - id: calc\n    urlSuffix: calc\n    serviceUrl: http://127.0.0.1:1\n    definition: { format: wsdl, file: calculator.wsdl }\n',
    );
    const loaded = await loadConfigFile(configFile);
    expect(loaded.definitionSchemas.get('calc')).toHaveLength(1);
    const snapshotFile = path.join(state, 'running.json');
    await writeRunningSnapshot(snapshotFile, (await runningSnapshot(loaded)).text);
    await writeFile(path.join(directory, 'calculator.wsdl'), '<definitions');

    expect((await loadRunningSnapshot(snapshotFile)).definitionSchemas).toEqual(loaded.definitionSchemas);
  });

  it('gives Envoy copies of the running TLS files, named by their content', async () => {
    const loaded = await loadConfigFile(configFile);
    const plan = await planRuntime(loaded.config, { directory });
    const first = await withRunningTlsFiles(plan, await runningSnapshot(loaded), state);
    expect(path.dirname(first.tls!.certificateFile)).toBe(state);
    expect(await readFile(first.tls!.certificateFile)).toEqual(certificateBytes);
    expect(await readFile(first.tls!.keyFile, 'utf8')).toBe('key one');

    // The same content: the same copy (an unchanged bootstrap). Another content: another copy.
    const again = await withRunningTlsFiles(plan, await runningSnapshot(loaded), state);
    expect(again.tls).toEqual(first.tls);
    await writeFile(path.join(directory, 'server.key'), 'key two');
    const rotated = await withRunningTlsFiles(plan, await runningSnapshot(loaded), state);
    expect(rotated.tls!.certificateFile).toBe(first.tls!.certificateFile);
    expect(rotated.tls!.keyFile).not.toBe(first.tls!.keyFile);
    expect(await readFile(first.tls!.keyFile, 'utf8')).toBe('key one');
    expect(await readFile(rotated.tls!.keyFile, 'utf8')).toBe('key two');
  });

  it("holds a backend entity's trusted CA file and gives Envoy a copy of it, a new one when it changes", async () => {
    await writeFile(path.join(directory, 'backend-ca.pem'), 'ca one');
    await writeFile(
      configFile,
      [
        'backends:',
        '  - { id: partner, url: "https://127.0.0.1:1", tls: { trustedCa: backend-ca.pem } }',
        'apis:',
        '  - { id: courses, urlSuffix: courses, serviceUrl: "http://127.0.0.1:1", policy: courses.xml }',
      ].join('\n'),
    );
    const loaded = await loadConfigFile(configFile);
    const snapshot = await runningSnapshot(loaded);
    const caFile = path.join(directory, 'backend-ca.pem');
    expect(snapshot.files.get(caFile)?.toString()).toBe('ca one');
    const plan = await planRuntime(loaded.config, { directory });
    const trustedCa = (running: typeof plan) =>
      running.backends!.find((backend) => backend.id === 'partner')!.tls!.trustedCa!;
    expect(trustedCa(plan)).toBe(caFile);
    const first = await withRunningTlsFiles(plan, snapshot, state);
    expect(path.dirname(trustedCa(first))).toBe(state);
    expect(await readFile(trustedCa(first), 'utf8')).toBe('ca one');

    // The disk changes after the snapshot: Envoy's copy stays what was validated until the next snapshot.
    await writeFile(caFile, 'ca two');
    expect(await readFile(trustedCa(first), 'utf8')).toBe('ca one');
    const next = await withRunningTlsFiles(
      plan,
      await runningSnapshot(await loadConfigFile(configFile)),
      state,
    );
    expect(trustedCa(next)).not.toBe(trustedCa(first));
    expect(await readFile(trustedCa(next), 'utf8')).toBe('ca two');
  });
});
