import type { z } from 'zod';

/**
 * Our wording for zod's issue codes, in one place: a user reads "must be an object, got a string", never zod's
 * "Invalid input: expected object, received string". Handed to every parse of a file a user wrote
 * (`safeParse(data, { error: issueWording })`); a message a schema states itself still wins. The loader appends
 * what was found (`, got 601`) where the wording does not say it already.
 */
export function issueWording(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${withArticle(issue.expected)}, got ${kindOf(issue.input)}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${literal(issue.values[0])}`
        : `must be one of ${issue.values.map(literal).join(', ')}`;
    case 'too_big':
      return bound('at most', 'less than', issue.maximum, issue.inclusive, issue.exact, issue.origin);
    case 'too_small':
      return bound('at least', 'more than', issue.minimum, issue.inclusive, issue.exact, issue.origin);
    case 'invalid_format':
      return formatWording(issue);
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    case 'invalid_key':
      return 'has a key that is not allowed here';
    case 'invalid_union':
      return 'matches none of the forms allowed here';
    case 'invalid_element':
      return `has an entry that is not allowed here`;
    default:
      return 'is not valid here';
  }
}

/** Whether the wording already says what was found (so the loader does not append `, got …` again). */
export function saysWhatWasFound(issue: { readonly code: string }): boolean {
  return issue.code === 'invalid_type';
}

/** What a length counts, one and many: "at least 1 entry", "at least 2 entries". */
const units: Readonly<Record<string, readonly [string, string]>> = {
  string: ['character', 'characters'],
  array: ['entry', 'entries'],
  set: ['entry', 'entries'],
  map: ['entry', 'entries'],
  file: ['byte', 'bytes'],
};

function bound(
  inclusiveWord: string,
  exclusiveWord: string,
  limit: number | bigint | Date,
  inclusive: boolean | undefined,
  exact: boolean | undefined,
  origin: string,
): string {
  const shown = limit instanceof Date ? limit.toISOString() : String(limit);
  const unit = units[origin];
  const comparison = exact ? 'exactly' : inclusive === false ? exclusiveWord : inclusiveWord;
  if (unit === undefined) return `must be ${comparison} ${shown}`;
  return `must have ${comparison} ${shown} ${unit[shown === '1' ? 0 : 1]}`;
}

const formatNames: Readonly<Record<string, string>> = {
  url: 'a URL',
  email: 'an email address',
  uuid: 'a UUID',
  guid: 'a GUID',
  datetime: 'an ISO 8601 date and time',
  date: 'an ISO 8601 date',
  time: 'an ISO 8601 time',
  duration: 'an ISO 8601 duration',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  cidrv4: 'an IPv4 prefix',
  cidrv6: 'an IPv6 prefix',
  base64: 'base64',
  base64url: 'base64url',
  jwt: 'a JWT',
};

function formatWording(issue: z.core.$ZodRawIssue<z.core.$ZodIssueInvalidStringFormat>): string {
  const details = issue as { prefix?: string; suffix?: string; includes?: string; pattern?: string };
  switch (issue.format) {
    case 'starts_with':
      return `must start with "${details.prefix}"`;
    case 'ends_with':
      return `must end with "${details.suffix}"`;
    case 'includes':
      return `must contain "${details.includes}"`;
    case 'regex':
      return `must match ${details.pattern}`;
    default:
      return `must be ${formatNames[issue.format] ?? `a valid ${issue.format}`}`;
  }
}

/** zod's type names in a YAML user's terms: a record is a map of keys to values. */
const typeNames: Readonly<Record<string, string>> = { record: 'map', int: 'integer' };

/** `an object`, `a string`, `an array`… for the type names zod expects. */
function withArticle(zodType: string): string {
  const type = typeNames[zodType] ?? zodType;
  if (type === 'null' || type === 'undefined' || type === 'never') return type;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/** What a value is, never the value itself (it may be a credential; the loader shows scalars it may show). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return withArticle(typeof value);
}

function literal(value: unknown): string {
  return typeof value === 'bigint' ? `${value}` : JSON.stringify(value);
}
