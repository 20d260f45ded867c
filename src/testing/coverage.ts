/**
 * What the tests exercised of each policy document of a configuration: every element (how often it ran and with
 * which outcomes), every branch of every choose (each `when`, the `otherwise` or the fall-through when there is
 * none), and each on-error section. Reported as text and as lcov (`DA` per element line, `BRDA` per branch).
 */
import { namedValueTable } from '../config/gateway.js';
import type { LoadedConfig } from '../config/load.js';
import { policySource } from '../config/policy-source.js';
import type { TraceStep } from '../engine/trace-steps.js';
import { ELEMENTS, readPolicyDocument } from '../policy/index.js';
import { shownPlaces } from './run-case.js';

interface ElementItem {
  readonly element: string;
  readonly at: string;
  readonly line: number;
  readonly column: number;
}

interface ChooseItem extends ElementItem {
  /** `when[1]`, …, then `otherwise` or `none` (nothing ran). */
  readonly branches: readonly string[];
}

interface DocumentItems {
  readonly file: string;
  /** Written inline in the configuration (no file of its own for lcov). */
  readonly inline: boolean;
  readonly elements: ElementItem[];
  readonly chooses: ChooseItem[];
  /** The on-error sections that hold statements, and the `at` of each statement in them. */
  readonly onErrors: { line: number; statements: string[] }[];
}

/** The coverage collected over runs: counts per element, outcome and branch. */
export class Coverage {
  readonly #documents: DocumentItems[];
  readonly #runs = new Map<string, number>();
  readonly #outcomes = new Map<string, Map<string, number>>();
  readonly #branches = new Map<string, number>();

  constructor(loaded: LoadedConfig) {
    this.#documents = policyDocuments(loaded);
  }

  add(steps: readonly TraceStep[]): void {
    for (const step of steps) {
      this.#runs.set(step.at, (this.#runs.get(step.at) ?? 0) + 1);
      const outcomes = this.#outcomes.get(step.at) ?? new Map<string, number>();
      const outcome = step.outcome ?? 'unfinished';
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      this.#outcomes.set(step.at, outcomes);
      if (step.branch !== undefined) {
        const key = `${step.at}#${step.branch}`;
        this.#branches.set(key, (this.#branches.get(key) ?? 0) + 1);
      }
    }
  }

  /** Branches taken / branches, over every document. */
  branchRatio(): { taken: number; total: number } {
    let taken = 0;
    let total = 0;
    for (const document of this.#documents)
      for (const choose of document.chooses)
        for (const branch of choose.branches) {
          total++;
          if ((this.#branches.get(`${choose.at}#${branch}`) ?? 0) > 0) taken++;
        }
    return { taken, total };
  }

  text(): string[] {
    const lines: string[] = [];
    for (const document of this.#documents) {
      const ran = document.elements.filter((item) => this.#runs.has(item.at)).length;
      const branches = document.chooses.flatMap((choose) => choose.branches.map((b) => `${choose.at}#${b}`));
      const taken = branches.filter((key) => this.#branches.has(key)).length;
      const onErrors = document.onErrors.filter((section) =>
        section.statements.some((at) => this.#runs.has(at)),
      );
      lines.push(
        `${shownPlaces(document.file)}: elements ${ran}/${document.elements.length}, branches ${taken}/${branches.length}, on-error ${onErrors.length}/${document.onErrors.length}`,
      );
      for (const item of document.elements) {
        const outcomes = this.#outcomes.get(item.at);
        let detail = outcomes
          ? [...outcomes].map(([outcome, count]) => `${outcome}×${count}`).join(' ')
          : 'never run';
        const choose = document.chooses.find((candidate) => candidate.at === item.at);
        if (choose)
          detail += `; ${choose.branches.map((branch) => `${branch}×${this.#branches.get(`${choose.at}#${branch}`) ?? 0}`).join(' ')}`;
        lines.push(`  ${`${item.line}:${item.column}`.padEnd(8)} ${item.element.padEnd(24)} ${detail}`);
      }
      for (const section of document.onErrors)
        if (!section.statements.some((at) => this.#runs.has(at)))
          lines.push(`  ${`${section.line}`.padEnd(8)} on-error                 never run`);
    }
    return lines;
  }

  lcov(): string {
    const out: string[] = [];
    for (const document of this.#documents) {
      if (document.inline) continue;
      out.push('TN:', `SF:${document.file}`);
      const lines = new Map<number, number>();
      for (const item of document.elements)
        lines.set(item.line, Math.max(lines.get(item.line) ?? 0, this.#runs.get(item.at) ?? 0));
      let found = 0;
      let hit = 0;
      for (const [block, choose] of document.chooses.entries()) {
        for (const [index, branch] of choose.branches.entries()) {
          const count = this.#branches.get(`${choose.at}#${branch}`) ?? 0;
          const ran = this.#runs.has(choose.at);
          out.push(`BRDA:${choose.line},${block},${index},${ran ? count : '-'}`);
          found++;
          if (count > 0) hit++;
        }
      }
      out.push(`BRF:${found}`, `BRH:${hit}`);
      for (const [line, count] of [...lines].sort((a, b) => a[0] - b[0])) out.push(`DA:${line},${count}`);
      out.push(`LF:${lines.size}`, `LH:${[...lines.values()].filter((count) => count > 0).length}`);
      out.push('end_of_record');
    }
    return `${out.join('\n')}\n`;
  }
}

/** Every policy document the configuration names, with its elements, chooses and on-error sections. */
function policyDocuments(loaded: LoadedConfig): DocumentItems[] {
  const { config } = loaded;
  // Positions are all coverage needs: an unset environment value is the loader's to report, not the report's.
  const namedValues = namedValueTable(config, () => {});
  const sources: { keys: (string | number)[]; value: string | undefined }[] = [
    { keys: ['policy'], value: config.policy },
    ...Object.entries(config.fragments).map(([id, value]) => ({ keys: ['fragments', id], value })),
    ...config.products.map((product, index) => ({
      keys: ['products', index, 'policy'],
      value: product.policy,
    })),
    ...config.apis.flatMap((api, apiIndex) => [
      { keys: ['apis', apiIndex, 'policy'], value: api.policy },
      ...api.operations.map((operation, index) => ({
        keys: ['apis', apiIndex, 'operations', index, 'policy'],
        value: operation.policy,
      })),
    ]),
  ];
  const seen = new Set<string>();
  const documents: DocumentItems[] = [];
  for (const { keys, value } of sources) {
    if (value === undefined) continue;
    // Named as the gateway names them when it compiles them, so the steps' places match.
    const { file, inline, text } = policySource(loaded, keys, value);
    if (seen.has(file)) continue;
    seen.add(file);
    if (text === undefined) continue;
    documents.push(itemsOf(file, inline, text, namedValues));
  }
  return documents;
}

type XmlElementOf = ReturnType<typeof readPolicyDocument>['root'];

function itemsOf(
  file: string,
  inline: boolean,
  text: string,
  namedValues: Parameters<typeof readPolicyDocument>[1]['namedValues'],
): DocumentItems {
  const items: DocumentItems = { file, inline, elements: [], chooses: [], onErrors: [] };
  const document = readPolicyDocument(text, { file, ...(namedValues ? { namedValues } : {}) });
  const place = (element: XmlElementOf) => {
    const { line, column } = document.source.position(element.offset);
    return { line, column, at: `${file}:${line}:${column}` };
  };
  const childElements = (element: XmlElementOf) =>
    element.children.filter((child): child is XmlElementOf => child.kind === 'element');
  const walk = (element: XmlElementOf, statements: string[] | undefined): void => {
    for (const child of childElements(element)) {
      if (child.name === 'on-error' && element.name === document.root.name) {
        const section = { line: place(child).line, statements: [] as string[] };
        walk(child, section.statements);
        if (section.statements.length > 0) items.onErrors.push(section);
        continue;
      }
      if (ELEMENTS.has(child.name)) {
        const where = place(child);
        items.elements.push({ element: child.name, ...where });
        statements?.push(where.at);
        if (child.name === 'choose') {
          const whens = childElements(child).filter((c) => c.name === 'when');
          const otherwise = childElements(child).some((c) => c.name === 'otherwise');
          items.chooses.push({
            element: 'choose',
            ...where,
            branches: [
              ...whens.map((_when, index) => `when[${index + 1}]`),
              otherwise ? 'otherwise' : 'none',
            ],
          });
        }
      }
      walk(child, statements);
    }
  };
  walk(document.root, undefined);
  return items;
}
