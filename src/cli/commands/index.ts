import type { CliCommand } from '../command.js';

/** One `portcullis` sub-command in the table: what `--help` lists, and its module, loaded only when it runs. */
export interface CommandEntry {
  /** The word after `portcullis`, e.g. `validate`. */
  readonly name: string;
  /** One line for `portcullis --help`. */
  readonly summary: string;
  /**
   * The command's module. Loaded on demand: each pulls in its own world (gRPC, Koa, the policy compiler…), and a
   * process of `up` — or `portcullis --version` — should not pay for the others.
   */
  load(): Promise<CliCommand>;
}

/** Every `portcullis` sub-command, in the order `--help` lists them. */
export const commands: readonly CommandEntry[] = [
  {
    name: 'up',
    summary: 'start Envoy, the policy engine, the Koa service (and companion processes), stop them on Ctrl-C',
    load: async () => (await import('./up.js')).command,
  },
  {
    name: 'stats',
    summary:
      "a running gateway's load view from Envoy's admin stats and the engines' metrics: req/s, p50/p99 by API, ext_proc errors, refusals (--watch)",
    load: async () => (await import('./stats.js')).command,
  },
  {
    name: 'validate',
    summary:
      'check gateway configurations and policy documents (file:line:col messages, exit 1 on any error)',
    load: async () => (await import('./validate.js')).command,
  },
  {
    name: 'test',
    summary:
      'run *.policy-test.yaml cases through the compiled policies with stubbed backends (no Envoy), with coverage',
    load: async () => (await import('./test.js')).command,
  },
  {
    name: 'run',
    summary:
      'send one request through the compiled policies (stubs from a file) and print the response and trace',
    load: async () => (await import('./run.js')).command,
  },
  {
    name: 'policy-reference',
    summary: 'print the reference of every policy element, its attributes and children (Markdown or JSON)',
    load: async () => (await import('./policy-reference.js')).command,
  },
  {
    name: 'differences',
    summary: 'print what behaves differently from API Management, and why (docs/differences.md)',
    load: async () => (await import('./differences.js')).command,
  },
  {
    name: 'envoy-config',
    summary: 'print the Envoy bootstrap that `up` would use, or the access sidecar of a backend',
    load: async () => (await import('./envoy-config.js')).command,
  },
  {
    name: 'import',
    summary:
      'turn an OpenAPI, WADL or WSDL definition into an API, or an APIOps folder (API Management) into a gateway file',
    load: async () => (await import('./import.js')).command,
  },
  {
    name: 'export',
    summary: 'write the gateway file as APIOps artifacts, the layout API Management publishes from',
    load: async () => (await import('./export.js')).command,
  },
  {
    name: 'hash-password',
    summary: 'print the scrypt hash of a password for auth.users[].passwordHash',
    load: async () => (await import('./hash-password.js')).command,
  },
  {
    name: 'backup',
    summary: 'copy the state kept on this machine (state.dataDir, auth.dataDir) while the gateway runs',
    load: async () => (await import('./backup.js')).command,
  },
  {
    name: 'events',
    summary:
      'print the events log-to-eventhub kept for a logger (state.dataDir or Redis), one JSON line each',
    load: async () => (await import('./events.js')).command,
  },
  {
    name: 'engine',
    summary: 'run one policy engine process (the ext_proc gRPC server Envoy calls)',
    load: async () => (await import('./engine.js')).command,
  },
  {
    name: 'service',
    summary: 'run the Koa service (OAuth 2.1 authorization server and MCP endpoint)',
    load: async () => (await import('./service.js')).command,
  },
];
