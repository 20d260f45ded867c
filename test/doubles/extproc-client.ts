import { type ClientDuplexStream, credentials, type ServiceError } from '@grpc/grpc-js';
import type { ProcessingRequest, ProcessingResponse } from '../../src/extproc/messages.js';
import { ExternalProcessorService } from '../../src/extproc/proto-client.js';

/**
 * Plays Envoy's side of one ext_proc stream, for unit tests of the engine's protocol handling: send a message, read
 * the answer, in order.
 */
export class FakeEnvoyStream {
  private readonly call: ClientDuplexStream<ProcessingRequest, ProcessingResponse>;
  private readonly answers: ProcessingResponse[] = [];
  private waiting: ((response: ProcessingResponse | Error) => void) | undefined;
  private ended: Error | undefined;
  readonly closed: Promise<ServiceError | undefined>;

  constructor(private readonly client: InstanceType<typeof ExternalProcessorClient>) {
    this.call = client.Process();
    this.call.on('data', (response: ProcessingResponse) => {
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = undefined;
        resolve(response);
      } else this.answers.push(response);
    });
    this.closed = new Promise((resolve) => {
      this.call.on('error', (error: ServiceError) => {
        this.ended = error;
        this.waiting?.(error);
        resolve(error);
      });
      this.call.on('end', () => {
        this.ended ??= new Error('stream ended');
        this.waiting?.(this.ended);
        resolve(undefined);
      });
    });
  }

  send(message: ProcessingRequest): void {
    this.call.write(message);
  }

  /** The next answer, or a rejection when the stream ends first or nothing comes within `timeoutMs`. */
  next(timeoutMs = 2000): Promise<ProcessingResponse> {
    const queued = this.answers.shift();
    if (queued) return Promise.resolve(queued);
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer')), timeoutMs);
      this.waiting = (answer) => {
        clearTimeout(timer);
        answer instanceof Error ? reject(answer) : resolve(answer);
      };
    });
  }

  async exchange(message: ProcessingRequest): Promise<ProcessingResponse> {
    this.send(message);
    return this.next();
  }

  /** Envoy's goodbye: half-close, then reset. */
  finish(): void {
    this.call.end();
    this.call.cancel();
  }

  /** Envoy's graceful goodbye (ext_proc_graceful_grpc_close): half-close, then wait for the engine's status. */
  halfClose(): void {
    this.call.end();
  }

  /** A reset without a half-close: the HTTP exchange was abandoned. */
  reset(): void {
    this.call.cancel();
  }

  close(): void {
    this.client.close();
  }
}

type ClientConstructor = new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
) => { Process(): ClientDuplexStream<ProcessingRequest, ProcessingResponse>; close(): void };

const ExternalProcessorClient = ExternalProcessorService as unknown as ClientConstructor;

export function connectFakeEnvoy(port: number): FakeEnvoyStream {
  return new FakeEnvoyStream(new ExternalProcessorClient(`127.0.0.1:${port}`, credentials.createInsecure()));
}

export function headerMap(headers: Record<string, string>) {
  return { headers: Object.entries(headers).map(([key, value]) => ({ key, raw_value: Buffer.from(value) })) };
}
