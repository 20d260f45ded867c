import { fileURLToPath } from 'node:url';
import { loadPackageDefinition, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';

const protoRoot = fileURLToPath(new URL('../../proto', import.meta.url));

/** Options every loader of our protos must share, so the engine and test clients decode alike. */
export const protoLoaderOptions: Options = {
  keepCase: true,
  oneofs: true,
  longs: String,
  enums: String,
  defaults: false,
  includeDirs: [protoRoot],
};

const packageDefinition = loadSync('envoy/service/ext_proc/v3/external_processor.proto', protoLoaderOptions);

interface LoadedPackages {
  envoy: {
    service: {
      ext_proc: {
        v3: { ExternalProcessor: { service: ServiceDefinition } & (new (...args: never[]) => unknown) };
      };
    };
  };
}

const loaded = loadPackageDefinition(packageDefinition) as unknown as LoadedPackages;

/** `envoy.service.ext_proc.v3.ExternalProcessor`, ready for `server.addService` or as a client constructor. */
export const ExternalProcessorService = loaded.envoy.service.ext_proc.v3.ExternalProcessor;

export const externalProcessorServiceName = 'envoy.service.ext_proc.v3.ExternalProcessor';
