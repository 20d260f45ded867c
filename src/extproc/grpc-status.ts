/**
 * gRPC's status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html), the ones the engine's own gRPC
 * server (grpc-h2.ts) answers with. Written out rather than taken from @grpc/grpc-js, whose index loads the whole
 * library (60 modules, tens of milliseconds of an engine's start) that the engine's hot path does not use.
 */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

export type GrpcStatus = (typeof GrpcStatus)[keyof typeof GrpcStatus];
