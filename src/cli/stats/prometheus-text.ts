/** One sample of the Prometheus text format: a series name, its labels and its value. */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const samplePattern = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+\d+)?$/;
const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

/**
 * Reads the Prometheus text exposition format (0.0.4) as the engine serves it: comment lines skipped, label values
 * unescaped. A line that is not a sample is an error naming its line number and text.
 */
export function parsePrometheusText(text: string, source: string): PromSample[] {
  const samples: PromSample[] = [];
  const lines = text.split('\n');
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = samplePattern.exec(line);
    if (!match)
      throw new Error(`${source}: line ${index + 1} is not a Prometheus sample: ${line.slice(0, 120)}`);
    const labels: Record<string, string> = {};
    const body = match[2]?.slice(1, -1) ?? '';
    labelPattern.lastIndex = 0;
    while (labelPattern.lastIndex < body.length) {
      const label = labelPattern.exec(body);
      if (!label)
        throw new Error(`${source}: line ${index + 1} has labels that do not parse: ${line.slice(0, 120)}`);
      labels[label[1]!] = label[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}
