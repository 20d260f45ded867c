import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DocumentHost, startDocumentHost } from '../doubles/document-host.js';
import { PageDriver } from '../doubles/stack-browser.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';

/**
 * A second, independent MCP client: the official MCP Python SDK (`mcp` from PyPI, pinned in
 * test/e2e/python-sdk/requirements.txt, installed into test/e2e/python-sdk/.venv by the setup step) runs its own
 * OAuth flow against the endpoint as `portcullis up` serves it, through Envoy. The login and consent pages are
 * driven here (PageDriver) on the URL the SDK hands over; everything else is the SDK's.
 */

const here = fileURLToPath(new URL('.', import.meta.url));
const PYTHON = path.join(here, 'python-sdk', '.venv', 'bin', 'python');
const CLIENT = path.join(here, 'python-sdk', 'client.py');

interface PythonResult {
  protocol_version: string;
  client_id: string | null;
  authorization_urls: string[];
  tools: string[];
  tools_after_refresh: string[];
  call_is_error: boolean;
  call_text: string;
  token_sets: number;
  refreshed: boolean;
  scope: string | null;
}

/**
 * Runs client.py: each `{"authorize": url}` it prints is signed in and consented as `user` on the real pages,
 * the redirect it ends in written back on its stdin; resolves with its `{"result": …}`.
 */
function runPythonClient(
  args: string[],
  user: { username: string; password: string },
): Promise<{ result: PythonResult; driver: PageDriver }> {
  const driver = new PageDriver();
  const child = spawn(PYTHON, [CLIENT, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    let result: PythonResult | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the Python client did not finish within 60 s:\n${stderr}`));
    }, 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as { authorize?: string; result?: PythonResult };
      if (message.authorize) {
        driver.authorize(message.authorize, user).then(
          (callback) => child.stdin.write(`${callback.href}\n`),
          (error: Error) => {
            child.kill('SIGKILL');
            reject(error);
          },
        );
      } else if (message.result) result = message.result;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0 && result) resolve({ result, driver });
      else reject(new Error(`the Python client exited with ${code}:\n${stderr}`));
    });
  });
}

let host: DocumentHost;
let stack: Stack;

beforeAll(async () => {
  if (!existsSync(PYTHON)) {
    throw new Error(
      `${PYTHON} is missing: run \`npm run setup -- --tests\` (it installs the MCP Python SDK)`,
    );
  }
  host = await startDocumentHost();
  stack = await startStack({
    authYaml: `  clientMetadataDocuments:
    allowedNetworks: [127.0.0.1/32]
    trustedCa: ${JSON.stringify(host.caFile)}`,
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await host?.close();
});

describe('the official MCP Python SDK through Envoy', () => {
  it('401 → discovery → dynamic registration → PKCE sign-in and consent → tools/list → tools/call → refresh', async () => {
    const redirect = 'http://127.0.0.1:47131/callback';
    const { result, driver } = await runPythonClient(
      ['--url', stack.mcpUrl, '--redirect-uri', redirect, '--client-name', 'Python SDK (registered)'],
      USERS.alice,
    );
    // Registered dynamically: a server-issued id, not a URL.
    expect(result.client_id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(result.authorization_urls).toHaveLength(1);
    const authorization = new URL(result.authorization_urls[0]!);
    expect(authorization.origin + authorization.pathname).toBe(`${stack.gatewayUrl}/v1/authorize`);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('resource')).toBe(stack.mcpUrl);
    // The pages were the real ones: the login form, then the consent form.
    expect(driver.log.some((line) => line.startsWith('POST') && line.includes('/v1/authorize/login'))).toBe(
      true,
    );
    expect(driver.log.some((line) => line.startsWith('POST') && line.includes('/v1/authorize/consent'))).toBe(
      true,
    );

    expect(result.protocol_version).toBe('2025-11-25');
    // The 401 asked for what initialize needs, the read scopes (MCP 2025-11-25 scope selection): the write tool
    // is not listed until the user grants its scope.
    expect(authorization.searchParams.get('scope')).toBe('read:courses-work read:grades-work');
    expect(result.tools).toEqual(['echo-thing', 'get-course', 'list-courses', 'list-grades']);
    expect(result.call_is_error).toBe(false);
    expect(JSON.parse(result.call_text)).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 1 })]),
    );
    // Tokens from the code exchange, then from the refresh, which the next tools/list went through.
    expect(result.token_sets).toBe(2);
    expect(result.refreshed).toBe(true);
    expect(result.tools_after_refresh).toEqual(result.tools);
    expect(stack.output()).toMatch(/"type":"client\.registered"/);
  });

  it('steps up: a write tool called with the read scopes is 403 insufficient_scope, and the SDK asks the user for the write scope', async () => {
    const redirect = 'http://127.0.0.1:47133/callback';
    const { result } = await runPythonClient(
      [
        ...['--url', stack.mcpUrl, '--redirect-uri', redirect, '--client-name', 'Python SDK (step-up)'],
        ...[
          '--tool',
          'create-course',
          '--tool-arguments',
          '{"body": {"title": "From Python", "credits": 3}}',
        ],
      ],
      USERS.alice,
    );
    expect(result.authorization_urls.map((url) => new URL(url).searchParams.get('scope'))).toEqual([
      'read:courses-work read:grades-work',
      // The challenge named the missing scope and kept the granted ones.
      'read:courses-work read:grades-work write:courses-work',
    ]);
    expect(result.call_is_error).toBe(false);
    expect(JSON.parse(result.call_text)).toMatchObject({ title: 'From Python', credits: 3 });
    expect(result.scope).toBe('read:courses-work read:grades-work write:courses-work');
  });

  it('uses its client metadata document URL as client_id when the server supports them (no registration)', async () => {
    const redirect = 'http://127.0.0.1:47132/callback';
    const url = host.json('/python/client.json', {
      client_id: `${host.origin}/python/client.json`,
      client_name: 'Python SDK (document)',
      redirect_uris: [redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const registrationsBefore = stack.output().match(/"type":"client\.registered"/g)?.length ?? 0;
    const { result } = await runPythonClient(
      ['--url', stack.mcpUrl, '--redirect-uri', redirect, '--client-metadata-url', url],
      USERS.bob,
    );
    expect(result.client_id).toBe(url);
    expect(new URL(result.authorization_urls[0]!).searchParams.get('client_id')).toBe(url);
    expect(result.tools.length).toBeGreaterThan(0);
    expect(result.call_is_error).toBe(false);
    expect(result.refreshed).toBe(true);
    expect(stack.output().match(/"type":"client\.registered"/g)?.length ?? 0).toBe(registrationsBefore);
    expect(host.hits('/python/client.json')).toBeGreaterThan(0);
  });
});
