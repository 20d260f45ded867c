import { loadPackageDefinition, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoLoaderOptions } from '../extproc/proto-client.js';

/**
 * `envoy.service.auth.v3.Authorization` from the subset in proto/, loaded like the ext_proc protos (keepCase, oneofs,
 * enums and longs as strings): one Check per request, so proto-loader's plain-object conversion is cheap enough.
 */
const packageDefinition = loadSync('envoy/service/auth/v3/external_auth.proto', protoLoaderOptions);

interface LoadedPackages {
  envoy: {
    service: {
      auth: {
        v3: { Authorization: { service: ServiceDefinition } & (new (...args: never[]) => unknown) };
      };
    };
  };
}

const loaded = loadPackageDefinition(packageDefinition) as unknown as LoadedPackages;

/** The service the engine serves, and the client constructor tests play Envoy with. */
export const AuthorizationService = loaded.envoy.service.auth.v3.Authorization;

export const authorizationServiceName = 'envoy.service.auth.v3.Authorization';
