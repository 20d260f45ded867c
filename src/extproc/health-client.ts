import { credentials, loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';

const healthPackage = loadPackageDefinition(
  loadSync(healthProtoPath, { keepCase: true, enums: String }),
) as unknown as {
  grpc: { health: { v1: { Health: ServiceClientConstructor } } };
};

/** Asks an engine's standard gRPC health service whether it is SERVING. */
export function checkEngineHealth(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  const client = new healthPackage.grpc.health.v1.Health(`${host}:${port}`, credentials.createInsecure());
  return new Promise((resolve) => {
    client.Check(
      { service: '' },
      { deadline: Date.now() + timeoutMs },
      (error: Error | null, reply: { status?: string } | undefined) => {
        client.close();
        resolve(!error && reply?.status === 'SERVING');
      },
    );
  });
}
