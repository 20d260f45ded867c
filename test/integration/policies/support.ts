import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { captureProcessLog } from '../../support/logger.js';

/** Small builders shared by the policy integration tests (one gateway per file, see test/helpers/gateway.ts). */

export interface Sections {
  readonly inbound?: string;
  readonly backend?: string;
  readonly outbound?: string;
  readonly onError?: string;
}

/**
 * A policy document whose sections hold `<base />` first, then the given statements; sections named in `replace`
 * hold only the statements (they do not inherit).
 */
export function policy(sections: Sections, replace: readonly (keyof Sections)[] = []): string {
  const section = (name: string, body = '') => {
    const key = (name === 'on-error' ? 'onError' : name) as keyof Sections;
    const base = replace.includes(key) ? '' : '<base />';
    return `  <${name}>\n    ${base}\n    ${body}\n  </${name}>`;
  };
  return [
    '<policies>',
    section('inbound', sections.inbound),
    section('backend', sections.backend),
    section('outbound', sections.outbound),
    section('on-error', sections.onError),
    '</policies>',
  ].join('\n');
}

/** One API with one operation per entry: `[id, method, template, policy file]`. */
export function apiYaml(
  id: string,
  serviceUrl: string,
  operations: readonly (readonly [string, string, string, string?])[],
  options: { policy?: string; suffix?: string } = {},
): string {
  const lines = [
    `  - id: ${id}`,
    `    urlSuffix: ${options.suffix ?? id}`,
    `    serviceUrl: ${serviceUrl}`,
    ...(options.policy ? [`    policy: ${options.policy}`] : []),
    '    operations:',
    ...operations.map(
      ([opId, method, template, file]) =>
        `      - { id: ${opId}, method: ${method}, urlTemplate: "${template}"${file ? `, policy: ${file}` : ''} }`,
    ),
  ];
  return lines.join('\n');
}

/** The JSON echo the test backend answers with. */
export interface Echo {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

export async function echoOf(response: Response): Promise<Echo> {
  return (await response.json()) as Echo;
}

export interface ScriptedBackend {
  readonly url: string;
  readonly port: number;
  /** Requests received per path (without the query). */
  readonly hits: Map<string, number>;
  /** Bodies received, oldest first. */
  readonly bodies: string[];
  close(): Promise<void>;
}

/** A backend whose answers a test scripts per request (slow answers, redirects, failures). */
export async function startScriptedBackend(
  handle: (request: IncomingMessage, response: ServerResponse, body: string, hit: number) => void,
): Promise<ScriptedBackend> {
  const hits = new Map<string, number>();
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '/').split('?')[0]!;
      const hit = (hits.get(path) ?? 0) + 1;
      hits.set(path, hit);
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      handle(request, response, body, hit);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The engine's structured log lines (one JSON object each), as written while `run` ran. */
export async function logLines(run: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const log = captureProcessLog();
  try {
    await run();
  } finally {
    log.stop();
  }
  return log.lines();
}
