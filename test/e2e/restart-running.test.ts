import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort } from '../../src/config/plan.js';
import { type EchoBackend, startEchoBackend } from '../doubles/echo-backend.js';
import { load, markingPolicy } from '../doubles/load.js';
import { type CertificateWorkshop, certificateWorkshop, type Issued } from '../processes/certificates.js';
import { portlessGateway } from '../processes/portless-gateway.js';
import { isCli, isEnvoy, printedUrl, processesOf, saidBy, startUp, type UpRun } from '../processes/up.js';
import { until } from '../processes/wait.js';

/** The portless gateway (two engines, the service with an authorization server), its API run through echo.xml. */
const gatewayConfig = (echo: EchoBackend) => stringify(portlessGateway(echo.url, 'echo.xml'));

/**
 * A restarted child starts from the configuration that runs, not from the files as they are on disk: an edit `up`
 * refused, then a crash, must not take the gateway down (issue 13, item 2).
 *
 * The two suites of this file each run an `up` of their own: they run side by side (concurrent), while the tests of
 * each run one after the other (sequential), each starting from what the one before left.
 */
describe.concurrent('portcullis up restarts a child on the running configuration', () => {
  let echo: EchoBackend;
  let run: UpRun;
  let directory: string;
  let gateway: string;

  beforeAll(async () => {
    echo = await startEchoBackend();
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-restart-running-'));
    await writeFile(path.join(directory, 'echo.xml'), markingPolicy('one'));
    await writeFile(path.join(directory, 'gateway.yaml'), gatewayConfig(echo));
    run = startUp(path.join(directory, 'gateway.yaml'));
    await run.waitFor('Press Ctrl-C to stop.');
    gateway = printedUrl(run.output(), 'gateway');
  }, 60_000);

  afterAll(async () => {
    if (run) expect(await run.stop()).toBe(0);
    await echo?.close();
  }, 30_000);

  /** The pids of up's children that run `portcullis <command>`. */
  const cliChildren = (command: string) => processesOf(run, isCli(command));

  /** Saves `text` to a file of the configuration and waits until up has refused it. */
  async function saveRefused(file: string, text: string): Promise<void> {
    const before = run.output().length;
    await writeFile(path.join(directory, file), text);
    await until(
      () => saidBy(run.output(), 'up', 'configuration refused', before),
      `up refusing the broken ${file}:\n${run
        .output()
        .slice(before)
        .split('\n')
        .filter((line) => !line.includes('{'))
        .join('\n')}`,
      15_000,
    );
  }

  /** SIGKILL to `pid`; resolves with the name up restarted it under, once up says it is back. */
  async function killAndAwaitRestart(pid: number): Promise<string> {
    const before = run.output().length;
    process.kill(pid, 'SIGKILL');
    await until(
      () => /\[up\] \S+ WARN +(\S+) exited \(killed by SIGKILL\)/.test(run.output().slice(before)),
      'the restart announced',
      10_000,
    );
    const name = /\[up\] \S+ WARN +(\S+) exited \(killed by SIGKILL\)/.exec(run.output().slice(before))![1]!;
    await until(
      () =>
        saidBy(run.output(), 'up', `${name} is back`, before) || run.output().includes('keeps dying', before),
      `${name} back`,
      30_000,
    );
    expect(run.output().slice(before)).not.toContain('keeps dying');
    expect(run.output().slice(before)).toContain(`${name} is back (restart`);
    return name;
  }

  /**
   * Requests until the engine named `engine` has answered some of them (Envoy spreads them over both engines):
   * every answer is a 200 marked by the policy `mark`.
   */
  async function servedWith(engine: string, mark: string): Promise<void> {
    const before = run.output().length;
    const servedByIt = () =>
      run
        .output()
        .slice(before)
        .split('\n')
        .some((line) => line.startsWith(`[${engine}] `) && line.includes(' api=echo'));
    // Envoy's health check puts the restarted engine back within its one-second interval.
    const stream = load(`${gateway}/echo/things/x`, { clients: 2, maxMs: 20_000 });
    await until(() => servedByIt() && stream.results.length >= 20, `requests through ${engine}`, 20_000);
    await stream.stop();
    expect(stream.failures).toEqual([]);
    expect(new Set(stream.results.map((result) => `${result.status} ${result.mark}`))).toEqual(
      new Set([`200 ${mark}`]),
    );
  }

  it.sequential('serves the running policy after a refused edit, when an engine was killed', async () => {
    await saveRefused('echo.xml', '<policies>\n  <inbound>\n    <set-header name="x-broken"\n');
    const [engine] = cliChildren('engine');
    const name = await killAndAwaitRestart(engine!);
    await servedWith(name, 'one');
  }, 90_000);

  it.sequential('restarts the service on the running configuration while the configuration file on disk is broken', async () => {
    await saveRefused('gateway.yaml', `${gatewayConfig(echo)}notAKey: true\n`);
    const [service] = cliChildren('service');
    await killAndAwaitRestart(service!);
    const metadata = await fetch(`${gateway}/.well-known/oauth-authorization-server`);
    expect(metadata.status).toBe(200);
    expect(((await metadata.json()) as { issuer: string }).issuer).toBe('http://localhost');
    // And an engine, with both files broken now.
    const [engine] = cliChildren('engine');
    await servedWith(await killAndAwaitRestart(engine!), 'one');
  }, 120_000);

  it.sequential('restarts on the configuration a later reload made run', async () => {
    const before = run.output().length;
    await writeFile(path.join(directory, 'echo.xml'), markingPolicy('two'));
    await writeFile(path.join(directory, 'gateway.yaml'), gatewayConfig(echo));
    await until(
      () => saidBy(run.output(), 'up', 'configuration reloaded', before),
      'the fixed files reloaded',
      30_000,
    );
    const [engine] = cliChildren('engine');
    await servedWith(await killAndAwaitRestart(engine!), 'two');
  }, 90_000);
});

/** The fingerprint (SHA-256) of the certificate an HTTPS listener presents, and the status it answers `path` with. */
function presented(url: string): Promise<{ fingerprint: string; status: number }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, { rejectUnauthorized: false, timeout: 5000 }, (response) => {
      const fingerprint = (response.socket as import('node:tls').TLSSocket).getPeerCertificate()
        .fingerprint256;
      response.resume();
      response.on('end', () => resolve({ fingerprint, status: response.statusCode ?? 0 }));
    });
    request.on('timeout', () => request.destroy(new Error(`no answer from ${url}`)));
    request.on('error', reject);
    request.end();
  });
}

describe.concurrent('portcullis up restarts Envoy on the certificates that run', () => {
  let echo: EchoBackend;
  let workshop: CertificateWorkshop;
  let server: Issued;
  let run: UpRun;

  beforeAll(async () => {
    echo = await startEchoBackend();
    workshop = await certificateWorkshop();
    server = await workshop.selfSigned({
      name: 'server',
      subject: '/O=Example/CN=localhost',
      ips: ['127.0.0.1'],
      usage: 'server',
    });
    const file = path.join(workshop.directory, 'gateway.yaml');
    await writeFile(
      file,
      stringify({
        gateway: { http: { host: '127.0.0.1', port: 0 } },
        admin: { host: '127.0.0.1', port: 0 },
        tls: { host: '127.0.0.1', port: await freePort(), certificate: 'server.pem', key: 'server.key' },
        envoy: { concurrency: 1 },
        apis: [
          {
            id: 'echo',
            urlSuffix: 'echo',
            serviceUrl: echo.url,
            operations: [{ id: 'get-thing', method: 'GET', urlTemplate: '/things/{name}' }],
          },
        ],
      }),
    );
    run = startUp(file);
    await run.waitFor('Press Ctrl-C to stop.');
  }, 60_000);

  afterAll(async () => {
    if (run) expect(await run.stop()).toBe(0);
    await echo?.close();
    await workshop?.remove();
  }, 30_000);

  it.sequential('serves the running certificate after a broken one was saved and refused, when Envoy was killed', async () => {
    expect(path.basename(server.certificateFile)).toBe('server.pem');
    const https = printedUrl(run.output(), 'https');
    const running = new X509Certificate(readFileSync(server.certificateFile)).fingerprint256;
    expect(await presented(`${https}/echo/things/1`)).toEqual({ fingerprint: running, status: 200 });

    // A certificate and key being replaced, caught half-way: neither loads.
    let before = run.output().length;
    await writeFile(server.certificateFile, '-----BEGIN CERTIFICATE-----\nnot a certificate\n');
    await writeFile(server.keyFile, '');
    // SIGHUP reads the files a configuration names again: Envoy rejects these, so nothing changes.
    run.child.kill('SIGHUP');
    await until(
      () => saidBy(run.output(), 'up', 'configuration refused', before),
      'up refusing the broken certificate',
      20_000,
    );

    before = run.output().length;
    const [envoy] = processesOf(run, isEnvoy);
    process.kill(envoy!, 'SIGKILL');
    await until(
      () =>
        saidBy(run.output(), 'up', 'envoy is back', before) || run.output().includes('keeps dying', before),
      'envoy back',
      30_000,
    );
    expect(run.output().slice(before)).not.toContain('keeps dying');
    await until(
      async () => (await presented(`${https}/echo/things/2`).catch(() => undefined))?.status === 200,
      'HTTPS answered again',
      15_000,
    );
    expect(await presented(`${https}/echo/things/3`)).toEqual({ fingerprint: running, status: 200 });
  }, 90_000);
});
