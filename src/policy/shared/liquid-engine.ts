import { Liquid } from 'liquidjs';
import { formatDecimal, parseDecimalText } from '../../expr/index.js';
import { liquidDate } from './liquid-date.js';

/**
 * Liquid in API Management's "C# mode" (set-body's `template="liquid"`): PascalCase filter names alias Liquid's
 * own. Built on first use: its constructor and filter table cost about 10 ms, which every process start paid
 * before, whether or not a policy had a template.
 */
let engine: Liquid | undefined;

export function liquidEngine(): Liquid {
  engine ??= createEngine();
  return engine;
}

const FILTER_ALIASES: Readonly<Record<string, string>> = {
  Abs: 'abs',
  Append: 'append',
  AtLeast: 'at_least',
  AtMost: 'at_most',
  Capitalize: 'capitalize',
  Compact: 'compact',
  Default: 'default',
  DividedBy: 'divided_by',
  Downcase: 'downcase',
  Escape: 'escape',
  First: 'first',
  H: 'escape',
  Join: 'join',
  Last: 'last',
  Lstrip: 'lstrip',
  Map: 'map',
  Minus: 'minus',
  Modulo: 'modulo',
  NewlineToBr: 'newline_to_br',
  Plus: 'plus',
  Prepend: 'prepend',
  Remove: 'remove',
  RemoveFirst: 'remove_first',
  Replace: 'replace',
  ReplaceFirst: 'replace_first',
  Round: 'round',
  Rstrip: 'rstrip',
  Size: 'size',
  Slice: 'slice',
  Sort: 'sort',
  Split: 'split',
  Strip: 'strip',
  StripHtml: 'strip_html',
  StripNewlines: 'strip_newlines',
  Times: 'times',
  Truncate: 'truncate',
  TruncateWords: 'truncatewords',
  Uniq: 'uniq',
  Upcase: 'upcase',
  UrlDecode: 'url_decode',
  UrlEncode: 'url_encode',
};

function createEngine(): Liquid {
  // Limits keep a hostile or runaway template from holding the engine: size of a template, time of one
  // render, memory of strings and arrays it builds. No file system: `include`/`render` find nothing.
  const liquid = new Liquid({
    strictFilters: false,
    strictVariables: false,
    ownPropertyOnly: true,
    parseLimit: 256 * 1024,
    renderLimit: 1000,
    memoryLimit: 16 * 1024 * 1024,
    fs: {
      exists: async () => false,
      existsSync: () => false,
      readFile: async () => '',
      readFileSync: () => '',
      resolve: (_dir, file) => file,
    },
    relativeReference: false,
  });
  const builtins = { ...liquid.filters };
  // C# mode knows its filters by their PascalCase names only ("The policy requires Pascal casing for Liquid filter
  // names", set-body page): Liquid's own names (`upcase`, `at_least`) are not filters there, so they are not here
  // either, and a template that uses one renders its input unchanged (an unknown filter is skipped).
  for (const name of Object.keys(builtins)) delete liquid.filters[name];
  for (const [alias, builtin] of Object.entries(FILTER_ALIASES)) {
    const impl = builtins[builtin];
    if (impl !== undefined) liquid.registerFilter(alias, impl);
  }
  // Not an alias: Liquid's own `date` takes strftime formats (`%Y`); C# mode's `Date` takes .NET ones.
  liquid.registerFilter('Date', liquidDate);
  // DotLiquid's Currency: a number formatted with "C" (invariant culture here, as all formatting), else the input.
  liquid.registerFilter('Currency', (input: unknown) => {
    const amount = parseDecimalText(String(input ?? '').trim());
    return amount === null ? input : formatDecimal(amount, 'C');
  });
  return liquid;
}
