import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseYamlWith } from '../../config/load.js';
import { redactHeaders } from '../../redact.js';
import { GatewayUnderTest } from '../../testing/gateway-under-test.js';
import { runCase } from '../../testing/run-case.js';
import { caseSchema, type Stubs, stubsSchema } from '../../testing/test-file.js';
import { prepareKeys } from '../../testing/test-keys.js';
import { type CliCommand, InputError, UsageError } from '../command.js';

/** `-H 'Name: value'` as a header pair. */
function headerOption(text: string): [string, string] {
  const colon = text.indexOf(':');
  if (colon <= 0) throw new UsageError(`-H takes "Name: value", got "${text}"`);
  return [text.slice(0, colon).trim(), text.slice(colon + 1).trim()];
}

/**
 * A request the policies sent (to the backend, a send-request's) as `run` prints it: like a trace, without the
 * request's secret values nor a credential header's value.
 */
function shownRequest<T extends ShownRequest>(request: T, redact: (text: string) => string): T {
  return {
    ...request,
    url: redact(request.url),
    headers: redactHeaders(request.headers).map(([name, value]) => [name, redact(value)]),
    body: redact(request.body),
  };
}

interface ShownRequest {
  readonly url: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

async function readStubs(file: string | undefined): Promise<Stubs> {
  if (file === undefined) return stubsSchema.parse({});
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new InputError(`--stubs ${file}: cannot read the file (${error.code ?? error.message})`);
  });
  return parseYamlWith(stubsSchema, text, file);
}

export const command: CliCommand = {
  usage:
    'portcullis run [--config gateway.yaml] [-H "Name: value"]… [-d BODY|@FILE] [--stubs STUBS.yaml] [--json] METHOD URL\n' +
    '  Sends one request through the compiled policies, in-process (no Envoy, no network: the backend and every call\n' +
    '  a policy makes are answered from --stubs, the `stubs` section of a test file), and prints the response and\n' +
    '  the trace: every element with its outcome, time, the values its expressions computed, the variables it\n' +
    '  changed and the branch a choose took.\n' +
    '  URL is a path (/courses/api/Course) or an absolute URL whose host picks the API.',
  async run(args) {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        config: { type: 'string', default: 'gateway.yaml' },
        header: { type: 'string', short: 'H', multiple: true },
        data: { type: 'string', short: 'd' },
        stubs: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (positionals.length !== 2) throw new UsageError('give METHOD and URL');
    const [method, target] = positionals as [string, string];
    const url = new URL(target, 'http://localhost');
    const headers = Object.fromEntries((values.header ?? []).map(headerOption));
    let body: string | undefined = values.data;
    if (body?.startsWith('@')) body = await readFile(body.slice(1), 'utf8');
    const gateway = await GatewayUnderTest.load(values.config);
    const stubs = await readStubs(values.stubs);
    let testCase: ReturnType<typeof caseSchema.parse>;
    try {
      testCase = caseSchema.parse({
        name: `${method} ${target}`,
        request: {
          method,
          path: `${url.pathname}${url.search}`,
          headers,
          host: url.host,
          scheme: url.protocol === 'https:' ? 'https' : 'http',
          ...(body === undefined ? {} : { body }),
        },
      });
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message.split('\n')[0]! : String(error));
    }
    const outcome = await runCase({
      testCase,
      fileStubs: stubs,
      directory: path.dirname(path.resolve(values.config)),
      gateway,
      keys: await prepareKeys({}),
    });
    const response = outcome.response;
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify(
          {
            status: response.status,
            headers: response.headers,
            body: response.body.toString('utf8'),
            backend: outcome.backend ? shownRequest(outcome.backend, outcome.redact) : null,
            calls: outcome.calls.map((call) => shownRequest(call, outcome.redact)),
            missingStubs: outcome.missing,
            lastError: outcome.lastError,
            steps: outcome.steps,
            trace: outcome.trace,
          },
          null,
          2,
        )}\n`,
      );
      return 0;
    }
    const lines = [
      `HTTP ${response.status}`,
      ...response.headers.map(([name, value]) => `${name}: ${value}`),
      '',
      response.body.toString('utf8'),
      '',
      outcome.backend
        ? `backend received: ${outcome.backend.method} ${outcome.redact(outcome.backend.url)}`
        : 'backend: not called',
      ...outcome.calls.map(
        (call) =>
          `call: ${call.method} ${outcome.redact(call.url)}${call.answered ? '' : ' (no stub answered it)'}`,
      ),
      ...outcome.missing.map(({ key, wanted }) => `no stub: ${key} (${wanted})`),
      ...(outcome.lastError && outcome.lastError.reason !== ''
        ? [`LastError: ${outcome.lastError.source} ${outcome.lastError.reason}: ${outcome.lastError.message}`]
        : []),
      'trace:',
      ...outcome.trace.map((line) => `  ${line}`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
