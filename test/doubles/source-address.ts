import { type IncomingHttpHeaders, request } from 'node:http';

/**
 * HTTP from a chosen loopback source address (any of 127.0.0.0/8 reaches a listener on 127.0.0.1 on Linux), so a
 * test can play several clients with distinct addresses — an attacker and a victim — without network namespaces.
 */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  json(): Record<string, unknown>;
}

export interface Sent {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

export function sendFrom(from: string, url: string, sent: Sent = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: sent.method ?? 'GET',
        headers: {
          ...(sent.body !== undefined ? { 'content-length': String(Buffer.byteLength(sent.body)) } : {}),
          ...sent.headers,
        },
        localAddress: from,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text) as Record<string, unknown>,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(sent.body);
  });
}

/** A browser at one source address: a cookie jar over sendFrom, manual redirects. */
export class BrowserAt {
  readonly cookies = new Map<string, string>();
  constructor(readonly address: string) {}

  async send(url: string, sent: Sent = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...sent.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const answer = await sendFrom(this.address, url, { ...sent, headers });
    for (const cookie of answer.headers['set-cookie'] ?? []) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return answer;
  }

  /** Posts a form (url-encoded) with the page's origin, as the login and consent pages do. */
  async post(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
    return this.send(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(url).origin,
        ...headers,
      },
      body: new URLSearchParams(fields).toString(),
    });
  }
}
