import path from 'node:path';
import { loadPackageDefinition, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import { packageRoot } from '../package-root.js';

/**
 * The ext_proc service as @grpc/proto-loader builds it: plain objects with oneofs, enums and longs as strings, both
 * ways. The engine does not use it (its side of the wire is protobufjs on a precompiled descriptor, proto.ts); the
 * clients that play Envoy in tests and the ext_authz server do. Kept apart so an engine's start does not pay
 * proto-loader's parse of the .proto files and its file descriptors (50–150 ms).
 */

/** Options every loader of our protos must share, so the engine and test clients decode alike. */
export const protoLoaderOptions: Options = {
  keepCase: true,
  oneofs: true,
  longs: String,
  enums: String,
  defaults: false,
  includeDirs: [path.join(packageRoot, 'proto')],
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

/** `envoy.service.ext_proc.v3.ExternalProcessor`: the client constructor tests play Envoy with. */
export const ExternalProcessorService = loaded.envoy.service.ext_proc.v3.ExternalProcessor;
