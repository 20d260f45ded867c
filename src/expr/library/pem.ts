/**
 * PEM blocks (RFC 7468) in text an expression hands over: RSA.ImportFromPem, X509Certificate2.CreateFromPem.
 * Found with indexOf rather than a regular expression, so that text full of BEGIN lines without their END costs one
 * pass per label asked for, not a pass per line.
 */

export interface PemBlock {
  /** The whole block, BEGIN and END lines included: what Node's key and certificate readers take. */
  readonly text: string;
  readonly label: string;
}

/** Every well-formed block with one of `labels`, in the order they appear; other blocks are skipped. */
export function pemBlocks(input: string, labels: readonly string[]): PemBlock[] {
  const found: Array<[number, PemBlock]> = [];
  for (const label of labels) {
    const begin = `-----BEGIN ${label}-----`;
    const end = `-----END ${label}-----`;
    for (let at = input.indexOf(begin); at >= 0; ) {
      const close = input.indexOf(end, at + begin.length);
      if (close < 0) break;
      if (/^[A-Za-z0-9+/=\s]*$/.test(input.slice(at + begin.length, close))) {
        found.push([at, { text: input.slice(at, close + end.length), label }]);
      }
      at = input.indexOf(begin, close + end.length);
    }
  }
  return found.sort((x, y) => x[0] - y[0]).map(([, block]) => block);
}
