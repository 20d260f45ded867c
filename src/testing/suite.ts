/**
 * A run of policy test files: each file's cases against its configuration, one result per case; the report
 * (one line per case, a diff per failure), JUnit XML, and the coverage the cases gave.
 */
import path from 'node:path';
import { ConfigError } from '../config/config-error.js';
import { problemInText } from '../config/load.js';
import type { Diagnostic } from '../diagnostic.js';
import { Coverage } from './coverage.js';
import { checkExpectations, type Mismatch } from './expectations.js';
import { GatewayUnderTest } from './gateway-under-test.js';
import { type CaseOutcome, runCase } from './run-case.js';
import { type LoadedTestFile, loadTestFile } from './test-file.js';
import { prepareKeys } from './test-keys.js';

export interface CaseResult {
  readonly file: string;
  readonly name: string;
  readonly mismatches: readonly Mismatch[];
  /** The case could not run (a certificate file missing …): why. */
  readonly error?: string;
  readonly outcome?: CaseOutcome;
  readonly ms: number;
}

export interface SuiteResult {
  readonly cases: readonly CaseResult[];
  /** Per configuration file. */
  readonly coverage: ReadonlyMap<string, Coverage>;
}

export const passed = (result: CaseResult) => result.error === undefined && result.mismatches.length === 0;

/**
 * Runs every case of every file. `configFile` (the `--config` option) wins over a file's own `config:`; a file
 * with neither uses `gateway.yaml` beside it. Problems in a test file throw ConfigError before any case runs.
 */
export async function runSuite(files: readonly string[], configFile?: string): Promise<SuiteResult> {
  return runTestFiles(await Promise.all(files.map(loadTestFile)), configFile);
}

/** `runSuite` over test files already read (`portcullis test --init` runs the starters it drafts, unwritten). */
export async function runTestFiles(
  loadedFiles: readonly LoadedTestFile[],
  configFile?: string,
): Promise<SuiteResult> {
  const gateways = new Map<string, GatewayUnderTest>();
  const coverage = new Map<string, Coverage>();
  const cases: CaseResult[] = [];
  for (const file of loadedFiles) {
    const config = path.resolve(
      configFile ??
        (file.tests.config === undefined
          ? path.join(file.directory, 'gateway.yaml')
          : path.resolve(file.directory, file.tests.config)),
    );
    let gateway = gateways.get(config);
    if (gateway === undefined) {
      gateway = await GatewayUnderTest.load(config);
      gateways.set(config, gateway);
      coverage.set(config, new Coverage(gateway.loaded));
    }
    checkCases(file, gateway);
    const keys = await prepareKeys(file.tests.keys);
    for (const testCase of file.tests.cases) {
      const started = performance.now();
      const shown = path.relative(process.cwd(), file.file) || file.file;
      try {
        const outcome = await runCase({
          testCase,
          fileStubs: file.tests.stubs,
          directory: file.directory,
          gateway,
          keys,
        });
        coverage.get(config)!.add(outcome.steps);
        cases.push({
          file: shown,
          name: testCase.name,
          mismatches: checkExpectations(testCase.expect, outcome),
          outcome,
          ms: performance.now() - started,
        });
      } catch (error) {
        cases.push({
          file: shown,
          name: testCase.name,
          mismatches: [],
          error: error instanceof Error ? error.message : String(error),
          ms: performance.now() - started,
        });
      }
    }
  }
  return { cases, coverage };
}

/** What the schema cannot know: the APIs, operations and keys a case names exist. */
function checkCases(file: LoadedTestFile, gateway: GatewayUnderTest): void {
  const problems: Diagnostic[] = [];
  const at = (keys: (string | number)[], message: string) =>
    problems.push(problemInText(file.text, file.file, keys, message));
  const apis = gateway.loaded.config.apis;
  for (const [index, testCase] of file.tests.cases.entries()) {
    if (testCase.api !== undefined) {
      const api = apis.find((candidate) => candidate.id === testCase.api);
      if (api === undefined)
        at(
          ['cases', index, 'api'],
          `no API "${testCase.api}" in ${gateway.file} (it has: ${apis.map((a) => a.id).join(', ') || 'none'})`,
        );
      else if (testCase.operation !== undefined) {
        const ids = api.operations.map(
          (operation) => operation.id ?? `${operation.method} ${operation.urlTemplate}`,
        );
        if (!ids.includes(testCase.operation))
          at(
            ['cases', index, 'operation'],
            `no operation "${testCase.operation}" in API "${api.id}" (it has: ${ids.join(', ') || 'none'})`,
          );
      } else if (testCase.request.path === undefined)
        at(['cases', index, 'api'], 'give the operation, or request.path, for the request to send');
    }
    const jwt = testCase.request.jwt;
    if (jwt !== undefined && file.tests.keys[jwt.key] === undefined)
      at(
        ['cases', index, 'request', 'jwt', 'key'],
        `no key "${jwt.key}" in this file's keys (it has: ${Object.keys(file.tests.keys).join(', ') || 'none'})`,
      );
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/** One line per case; under a failure, what differed, where the outcome was decided, and the trace. */
export function reportLines(result: SuiteResult): string[] {
  const lines: string[] = [];
  for (const item of result.cases) {
    const time = `(${item.ms.toFixed(1)} ms)`;
    if (passed(item)) {
      lines.push(`PASS ${item.file} › ${item.name} ${time}`);
      continue;
    }
    lines.push(`FAIL ${item.file} › ${item.name} ${time}`);
    if (item.error !== undefined) {
      lines.push(`     could not run: ${item.error}`);
      continue;
    }
    for (const mismatch of item.mismatches)
      lines.push(`     ${mismatch.what}: expected ${mismatch.expected}, got ${mismatch.actual}`);
    const outcome = item.outcome!;
    if (outcome.decidedAt !== undefined) lines.push(`     decided at ${outcome.decidedAt}`);
    const error = outcome.lastError;
    if (error !== null && error.reason !== '')
      lines.push(`     LastError: ${error.source} ${error.reason}: ${error.message}`);
    lines.push('     trace:');
    for (const line of outcome.trace) lines.push(`       ${line}`);
    for (const call of outcome.calls.filter((c) => !c.answered))
      lines.push(`     no stub answered ${call.method} ${call.url}`);
  }
  const failed = result.cases.filter((item) => !passed(item)).length;
  lines.push(`${result.cases.length - failed} passed, ${failed} failed`);
  return lines;
}

const escapeXml = (text: string) =>
  text.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!,
  );

/** JUnit XML: one testsuite per test file, one testcase per case, a failure with the mismatches. */
export function junitXml(result: SuiteResult): string {
  const byFile = new Map<string, CaseResult[]>();
  for (const item of result.cases) byFile.set(item.file, [...(byFile.get(item.file) ?? []), item]);
  const suites = [...byFile].map(([file, items]) => {
    const failures = items.filter((item) => !passed(item)).length;
    const seconds = items.reduce((sum, item) => sum + item.ms, 0) / 1000;
    const cases = items.map((item) => {
      const open = `    <testcase classname="${escapeXml(file)}" name="${escapeXml(item.name)}" time="${(item.ms / 1000).toFixed(3)}"`;
      if (passed(item)) return `${open} />`;
      const message =
        item.error ??
        item.mismatches.map((m) => `${m.what}: expected ${m.expected}, got ${m.actual}`).join('\n');
      const detail = item.outcome
        ? [`decided at ${item.outcome.decidedAt ?? '?'}`, ...item.outcome.trace].join('\n')
        : '';
      return `${open}>\n      <failure message="${escapeXml(message.split('\n')[0]!)}">${escapeXml(`${message}\n${detail}`)}</failure>\n    </testcase>`;
    });
    return `  <testsuite name="${escapeXml(file)}" tests="${items.length}" failures="${failures}" time="${seconds.toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${suites.join('\n')}\n</testsuites>\n`;
}
