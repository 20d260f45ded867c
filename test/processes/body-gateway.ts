import { type EchoBackend, startEchoBackend } from '../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from './gateway.js';
import { apiYaml, policy } from './gateway-files.js';

/**
 * A real Envoy and engine in front of an echo backend, with one API: `POST /body/upper`, whose policy reads the body
 * (set-body upper-cases it), and `POST /body/stream`, whose policies do not, so its body streams to the backend.
 * `limits` is the inside of `gateway.limits` (`maxRequestBodyBytes: 1048576, requestTimeoutMs: 0`).
 */
export interface BodyGateway extends GatewayStack {
  readonly backend: EchoBackend;
}

export async function startBodyGateway(limits = ''): Promise<BodyGateway> {
  const backend = await startEchoBackend();
  const gateway = await startGateway(
    [
      ...(limits ? ['gateway:', `  limits: { ${limits} }`] : []),
      'apis:',
      apiYaml('body', backend.url, [
        ['upper', 'POST', '/upper', 'upper.xml'],
        ['stream', 'POST', '/stream'],
      ]),
      '',
    ].join('\n'),
    {
      'upper.xml': policy({ inbound: '<set-body>@(context.Request.Body.As<string>().ToUpper())</set-body>' }),
    },
  );
  return {
    ...gateway,
    backend,
    async stop() {
      await gateway.stop();
      await backend.close();
    },
  };
}
