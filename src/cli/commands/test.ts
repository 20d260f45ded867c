import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../../config/config-error.js';
import { GatewayLoadError } from '../../config/gateway.js';
import { loadConfigFile } from '../../config/load.js';
import { FileSetWatcher, referencedFiles } from '../../config/watch.js';
import { formatDiagnostic } from '../../diagnostic.js';
import { starterTests } from '../../testing/init.js';
import { junitXml, passed, reportLines, runSuite } from '../../testing/suite.js';
import { type CliCommand, UsageError } from '../command.js';

const testFilePattern = /\.policy-test\.ya?ml$/;

/** The test files under a folder (node_modules and dot-folders left out), sorted. */
async function findTestFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && testFilePattern.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => !file.split(path.sep).some((part) => part === 'node_modules' || part.startsWith('.')))
    .sort();
}

async function expandFiles(positionals: readonly string[], config: string | undefined): Promise<string[]> {
  const roots = positionals.length > 0 ? positionals : [config ? path.dirname(config) : '.'];
  const files: string[] = [];
  for (const root of roots) {
    if (testFilePattern.test(root) || !existsSync(root)) files.push(root);
    else files.push(...(await findTestFiles(root)));
  }
  return files;
}

interface TestOptions {
  readonly config: string | undefined;
  readonly junit: string | undefined;
  readonly coverage: boolean;
  readonly lcov: string | undefined;
  readonly minBranches: number | undefined;
}

/** One run of the files: the report on stdout, JUnit and lcov files; resolves to the exit status. */
async function runOnce(files: readonly string[], options: TestOptions): Promise<number> {
  let result: Awaited<ReturnType<typeof runSuite>>;
  try {
    result = await runSuite(files, options.config);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof GatewayLoadError) {
      for (const problem of error.problems) process.stderr.write(`${formatDiagnostic(problem)}\n`);
      return 1;
    }
    throw error;
  }
  for (const line of reportLines(result)) process.stdout.write(`${line}\n`);
  if (options.junit) await writeFile(options.junit, junitXml(result));
  let status = result.cases.every(passed) ? 0 : 1;
  if (options.coverage || options.lcov || options.minBranches !== undefined) {
    const coverages = [...result.coverage.values()];
    if (options.coverage) {
      process.stdout.write('\ncoverage:\n');
      for (const coverage of coverages) for (const line of coverage.text()) process.stdout.write(`${line}\n`);
    }
    if (options.lcov) await writeFile(options.lcov, coverages.map((coverage) => coverage.lcov()).join(''));
    if (options.minBranches !== undefined) {
      const taken = coverages.reduce((sum, c) => sum + c.branchRatio().taken, 0);
      const total = coverages.reduce((sum, c) => sum + c.branchRatio().total, 0);
      const percent = total === 0 ? 100 : (taken / total) * 100;
      process.stdout.write(`branch coverage ${percent.toFixed(1)}% (${taken}/${total})\n`);
      if (percent < options.minBranches) {
        process.stdout.write(`branch coverage is under --min-branches ${options.minBranches}%\n`);
        status = 1;
      }
    }
  }
  return status;
}

async function init(config: string | undefined): Promise<number> {
  const loaded = await loadConfigFile(config ?? 'gateway.yaml');
  for (const starter of await starterTests(loaded)) {
    if ('skipped' in starter) {
      process.stdout.write(`no starter for API "${starter.api}": ${starter.skipped}\n`);
      continue;
    }
    if (existsSync(starter.file)) {
      process.stdout.write(`kept ${starter.file} (it exists)\n`);
      continue;
    }
    await writeFile(starter.file, starter.text);
    process.stdout.write(`wrote ${starter.file}\n`);
    for (const reason of starter.left) process.stdout.write(`  left out ${reason}\n`);
  }
  return 0;
}

/** Runs again whenever a test file, the configuration or a policy changes; stops on Ctrl-C. */
async function watchAndRun(files: readonly string[], options: TestOptions): Promise<number> {
  const watched = async () => {
    const configs = options.config
      ? [options.config]
      : files.map((file) => path.join(path.dirname(file), 'gateway.yaml'));
    const referenced = await Promise.all(
      configs.filter((file) => existsSync(file)).map((file) => referencedFiles(file)),
    );
    return [...files.map((file) => path.resolve(file)), ...referenced.flat()];
  };
  let running = Promise.resolve();
  const again = () => {
    running = running.then(async () => {
      process.stdout.write('\n--- files changed: running again\n');
      await runOnce(files, options).catch((error: unknown) => process.stderr.write(`${String(error)}\n`));
      watcher.watch(await watched());
    });
  };
  const watcher = new FileSetWatcher(again);
  await runOnce(files, options);
  watcher.watch(await watched());
  process.stdout.write('watching for changes (Ctrl-C stops)\n');
  // The watcher does not keep the process alive by itself.
  const alive = setInterval(() => {}, 1 << 30);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(alive);
  watcher.close();
  return 0;
}

export const command: CliCommand = {
  usage:
    'portcullis test [--config gateway.yaml] [--junit FILE] [--coverage] [--lcov FILE] [--min-branches PERCENT] [--watch] [FILES|FOLDERS…]\n' +
    '       portcullis test --init [--config gateway.yaml]\n' +
    '  Runs the cases of *.policy-test.yaml files through the compiled policies with stubbed backends (no Envoy, no\n' +
    '  network): one line per case, a diff and the trace for a failure, exit 1 when any fails. --init writes a\n' +
    '  starter test file per API of the configuration, each case expecting the answer the policies give today.',
  async run(args) {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        junit: { type: 'string' },
        coverage: { type: 'boolean' },
        lcov: { type: 'string' },
        'min-branches': { type: 'string' },
        watch: { type: 'boolean' },
        init: { type: 'boolean' },
      },
    });
    if (values.init) return init(values.config);
    const minBranches = values['min-branches'] === undefined ? undefined : Number(values['min-branches']);
    if (minBranches !== undefined && !(minBranches >= 0 && minBranches <= 100))
      throw new UsageError(
        `--min-branches must be a percentage from 0 to 100, got "${values['min-branches']}"`,
      );
    const files = await expandFiles(positionals, values.config);
    if (files.length === 0) throw new UsageError('no *.policy-test.yaml file found');
    const options: TestOptions = {
      config: values.config,
      junit: values.junit,
      coverage: values.coverage === true,
      lcov: values.lcov,
      minBranches,
    };
    return values.watch ? watchAndRun(files, options) : runOnce(files, options);
  },
};
