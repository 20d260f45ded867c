/** Small builders shared by the policy integration tests (one gateway per file, see test/helpers/gateway.ts). */

export interface Sections {
  readonly inbound?: string;
  readonly backend?: string;
  readonly outbound?: string;
  readonly onError?: string;
}

/** A policy document whose sections hold `<base />` first, then the given statements. */
export function policy(sections: Sections): string {
  const section = (name: string, body = '') => `  <${name}>\n    <base />\n    ${body}\n  </${name}>`;
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
