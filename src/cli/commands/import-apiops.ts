import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Document, parseDocument } from 'yaml';
import { type GatewayDocument, gatewaySections, importApiops } from '../../catalog/apiops/index.js';
import { gatewayFileProblems } from '../../config/gateway.js';
import { parseConfig } from '../../config/load.js';
import { writeFindings } from '../apiops-report.js';
import { type CliCommand, InputError, UsageError } from '../command.js';

/** A section worth writing: an empty list or map is what the schema defaults to anyway. */
function hasContent(value: unknown): boolean {
  if (value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object' && value !== null) return Object.keys(value).length > 0;
  return true;
}

/**
 * The configuration text: the imported sections replace the same sections of an existing file (whose other
 * sections — listeners, auth, state… — and comments stay), or make a new one.
 */
async function configText(
  file: string,
  imported: GatewayDocument,
): Promise<{ text: string; existed: boolean }> {
  const existed = existsSync(file);
  let document: Document;
  if (existed) {
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new InputError(`--config ${file}: cannot read the file (${error.code ?? error.message})`);
    });
    // The file must be valid before we touch it: an error afterwards would otherwise look like ours.
    parseConfig(text, file);
    document = parseDocument(text);
  } else {
    document = new Document({});
    document.commentBefore = ' Imported from APIOps artifacts by `portcullis import apiops`.';
  }
  for (const section of gatewaySections) {
    const value = imported[section];
    if (hasContent(value)) document.set(section, document.createNode(value));
    else document.delete(section);
  }
  return { text: document.toString({ lineWidth: 0 }), existed };
}

async function writeAtomically(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  // Written next to it and renamed, so a running gateway watching the file never sees half of it.
  const temporary = `${file}.import-${process.pid}.tmp`;
  await writeFile(temporary, text, 'utf8');
  await rename(temporary, file);
}

export const usage =
  'portcullis import apiops DIR [--config GATEWAY.yaml] [--overrides configuration.ENV.yaml]\n' +
  '  Reads an APIOps artifact folder (extracted from API Management) into the gateway file (default gateway.yaml):\n' +
  '  its APIs, products, backends, named values, … replace those sections; policies and specifications are\n' +
  '  written beside it. What cannot be carried over is listed on stderr with the file it came from and why.';

/** `portcullis import apiops DIR`: reached through `portcullis import`, whose first word names the format. */
export const importApiopsCommand: CliCommand = {
  usage,
  async run(args) {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { config: { type: 'string' }, overrides: { type: 'string' } },
    });
    const [directory, ...extra] = positionals;
    if (directory === undefined) throw new UsageError('give the APIOps artifact folder');
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const file = path.resolve(values.config ?? 'gateway.yaml');

    const imported = await importApiops(path.resolve(directory), {
      ...(values.overrides === undefined ? {} : { overrides: path.resolve(values.overrides) }),
    });
    const { text, existed } = await configText(file, imported.document);
    for (const [relative, content] of imported.files) {
      const target = path.join(path.dirname(file), relative);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content, 'utf8');
    }
    await writeAtomically(file, text);
    writeFindings(imported.findings);
    const { document } = imported;
    process.stdout.write(
      `${existed ? 'updated' : 'wrote'} ${path.relative(process.cwd(), file) || file}: ${document.apis.length} APIs, ` +
        `${document.products.length} products, ${document.backends.length} backends, ` +
        `${Object.keys(document.namedValues).length} named values, ${Object.keys(document.fragments).length} fragments, ` +
        `${document.subscriptions.length} subscriptions, ${document.users.length} users, ${document.groups.length} groups ` +
        `(${imported.files.size} policy and definition files beside it)\n`,
    );
    const problems = await gatewayFileProblems(file);
    if (problems.length === 0) return 0;
    process.stderr.write(
      `the gateway will not start with it until these are fixed:\n${problems.map((line) => `  ${line}\n`).join('')}`,
    );
    return 1;
  },
};
