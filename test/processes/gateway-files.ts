/**
 * The files a test gateway is started from: policy documents and the API entries of its gateway.yaml (one gateway per
 * test file, see test/processes/gateway.ts).
 */

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
