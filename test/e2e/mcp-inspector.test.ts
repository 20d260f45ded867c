import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/config/plan.js';
import { PageDriver } from '../doubles/stack-browser.js';
import { copyExample } from '../processes/example-copy.js';
import { startUp, type UpRun } from '../processes/up.js';

/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector` 2.12.0, a dev package), the client that found that the
 * example's `get-course` refused `--tool-arg id=2` (issue #35: the Inspector sends `2` as a JSON number, the
 * parameter was typed string). It runs against a copy of examples/courses under `portcullis up`, through Envoy,
 * with its own OAuth flow: discovery from the 401, dynamic registration, PKCE, its loopback callback listener. The
 * one step a person would do, signing in and consenting on the pages at the URL it prints, is done here by the
 * PageDriver; the redirect it ends in is delivered to the Inspector's listener as the browser would.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const INSPECTOR = path.join(
  root,
  ...['node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js'],
);
/** The example's demo account (examples/courses/gateway.yaml). */
const ALICE = { username: 'alice', password: 'alice-demo-password' };

const scratch = mkdtempSync(path.join(tmpdir(), 'portcullis-inspector-'));
let run: UpRun;
let mcpUrl: string;

beforeAll(async () => {
  const { configFile, ports } = await copyExample(path.join(scratch, 'gateway'));
  run = startUp(configFile);
  await run.waitFor('Press Ctrl-C to stop.', 90_000);
  mcpUrl = `http://localhost:${ports.get('8080')}/v1/mcp`;
}, 120_000);

afterAll(async () => {
  if (run) expect(await run.stop()).toBe(0);
  rmSync(scratch, { recursive: true, force: true });
}, 30_000);

/** What `--format json` prints for a tools/call, inside its `{"result": …}`. */
interface ToolResult {
  readonly isError?: boolean;
  readonly structuredContent?: unknown;
}

interface InspectorRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The authorization URLs it asked the user to open, in order. */
  readonly navigations: readonly string[];
  readonly driver: PageDriver;
}

/**
 * Runs `mcp-inspector --cli …` on the project's Node, its stores (catalog, client config, OAuth state and secrets)
 * in the test's folder, not the user's home. `MCP_AUTO_OPEN_ENABLED=true` is its documented switch for OAuth without
 * a terminal; `BROWSER=true` makes the browser it then opens a no-op. Each "Please navigate to: URL" it prints is
 * signed in as alice and the callback fetched.
 */
function inspector(args: readonly string[]): Promise<InspectorRun> {
  const home = path.join(scratch, 'home');
  const { VITEST: _vitest, NO_COLOR: _noColor, ...inherited } = process.env;
  const child = spawn(process.execPath, [INSPECTOR, '--cli', ...args], {
    env: {
      ...inherited,
      HOME: home,
      MCP_STORAGE_DIR: path.join(home, 'storage'),
      MCP_CATALOG_PATH: path.join(home, 'mcp.json'),
      MCP_CLIENT_CONFIG_PATH: path.join(home, 'client.json'),
      MCP_INSPECTOR_SECRET_STORE: 'file',
      MCP_AUTO_OPEN_ENABLED: 'true',
      BROWSER: 'true',
      DISPLAY: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const driver = new PageDriver();
  const navigations: string[] = [];
  let stdout = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the Inspector did not finish within 60 s:\n${stderr}`));
    }, 60_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      for (const [, url] of stderr.matchAll(/Please navigate to: (\S+)/g)) {
        if (navigations.includes(url!)) continue;
        navigations.push(url!);
        driver
          .authorize(url!, ALICE)
          .then((callback) => fetch(callback))
          .then(
            (answer) => answer.body?.cancel(),
            (error: Error) => {
              child.kill('SIGKILL');
              reject(error);
            },
          );
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, navigations, driver });
    });
  });
}

describe('the MCP Inspector CLI 2.12.0 against the example under up', () => {
  it('signs in with its own OAuth flow and calls get-course with --tool-arg id=2 (a JSON number)', async () => {
    const callback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    // What the gateway asks of a client that has no token: the read scope initialize needs (scope selection).
    const challenge = (
      await fetch(mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'c', version: '1' },
          },
        }),
      })
    ).headers.get('www-authenticate');
    expect(challenge).toMatch(/^Bearer scope="read:courses-work", resource_metadata=/);
    const called = await inspector([
      ...[mcpUrl, '--transport', 'http', '--callback-url', callback, '--format', 'json'],
      ...['--method', 'tools/call', '--tool-name', 'get-course', '--tool-arg', 'id=2'],
    ]);
    expect(called.code, called.stderr).toBe(0);
    // One authorization, at the gateway's authorization server.
    expect(called.navigations).toHaveLength(1);
    const authorization = new URL(called.navigations[0]!);
    expect(authorization.origin + authorization.pathname).toBe(`${new URL(mcpUrl).origin}/v1/authorize`);
    // The Inspector's CLI asks for every scope of the resource metadata (`scopes_supported`) on its first sign-in,
    // not the challenge's: its own choice (the TypeScript and Python SDKs ask for the challenge's read scope).
    expect(authorization.searchParams.get('scope')).toBe('read:courses-work write:courses-work');
    expect(authorization.searchParams.get('redirect_uri')).toBe(callback);
    expect(authorization.searchParams.get('resource')).toBe(mcpUrl);
    expect(called.driver.log.some((line) => line.includes('/v1/authorize/consent'))).toBe(true);
    const { result } = JSON.parse(called.stdout) as { result: ToolResult };
    expect(result.isError ?? false).toBe(false);
    // Course 2 of the example's backend, reached at /api/Course/2.
    expect(result.structuredContent).toEqual({ id: 2, title: 'Compilers', credits: 6 });
  });

  it('calls again from its stored token, without a sign-in (--stored-auth-only, its non-interactive mode)', async () => {
    const called = await inspector([
      ...[mcpUrl, '--transport', 'http', '--stored-auth-only', '--format', 'json'],
      ...['--method', 'tools/call', '--tool-name', 'list-courses', '--tool-arg', 'courseID=3'],
    ]);
    expect(called.code, called.stderr).toBe(0);
    expect(called.navigations).toEqual([]);
    const { result } = JSON.parse(called.stdout) as { result: ToolResult };
    expect(result.isError ?? false).toBe(false);
    // The example's policy rewrites ?courseID=3 to /api/Course/3.
    expect(result.structuredContent).toMatchObject({ id: 3, title: 'Distributed Systems' });
  });
});
