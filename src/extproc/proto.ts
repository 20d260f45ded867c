import { readFileSync } from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs/light.js';
import { packageRoot } from '../package-root.js';
import type { ProcessingMode, ProcessingRequest, ProcessingResponse } from './messages.js';

export const externalProcessorServiceName = 'envoy.service.ext_proc.v3.ExternalProcessor';

// The engine's side of the wire, on protobufjs directly: proto-loader's conversion of every message to and from a
// plain object (oneofs, enums and longs as strings) is a large part of the engine's cost per request, and the
// engine reads only a few fields of each request. The types come from a descriptor made from the .proto files ahead
// of time (scripts/proto-descriptor.ts), not from parsing them at every start.
const root = protobuf.Root.fromJSON(
  JSON.parse(
    readFileSync(path.join(packageRoot, 'proto', 'ext_proc.descriptor.json'), 'utf8'),
  ) as protobuf.INamespace,
);
root.resolveAll();
const requestType = root.lookupType('envoy.service.ext_proc.v3.ProcessingRequest');
const responseType = root.lookupType('envoy.service.ext_proc.v3.ProcessingResponse');
const responseStatus = root.lookupEnum('envoy.service.ext_proc.v3.CommonResponse.ResponseStatus').values;
const modeEnums = root.lookupType('envoy.extensions.filters.http.ext_proc.v3.ProcessingMode');
const headerSendMode = (modeEnums.lookupEnum('HeaderSendMode') as protobuf.Enum).values;
const bodySendMode = (modeEnums.lookupEnum('BodySendMode') as protobuf.Enum).values;

/**
 * A decoded ProcessingRequest as the engine reads it: a protobufjs message, not a plain object. Fields that were not
 * on the wire read as their defaults from the prototype (false, "", an empty array for bytes, null for messages);
 * `request` names the phase (the oneof); `google.protobuf.Value` fields are camelCase with `kind` naming the member.
 */
export function decodeProcessingRequest(bytes: Buffer): ProcessingRequest {
  return requestType.decode(bytes) as unknown as ProcessingRequest;
}

const commonKinds = ['request_headers', 'response_headers', 'request_body', 'response_body'] as const;

/** Encodes what the stream answers, turning the enum names of messages.ts into their numbers. */
export function encodeProcessingResponse(response: ProcessingResponse): Buffer {
  let wire: Record<string, unknown> = response as Record<string, unknown>;
  for (const kind of commonKinds) {
    const common = response[kind]?.response;
    if (common?.status !== undefined) {
      if (wire === response) wire = { ...response };
      wire[kind] = { response: { ...common, status: responseStatus[common.status] } };
    }
  }
  const mode = response.mode_override;
  if (mode) {
    if (wire === response) wire = { ...response };
    wire.mode_override = wireMode(mode);
  }
  return responseType.encode(wire).finish() as Buffer;
}

const headerModeFields = [
  'request_header_mode',
  'response_header_mode',
  'request_trailer_mode',
  'response_trailer_mode',
] as const;
const bodyModeFields = ['request_body_mode', 'response_body_mode'] as const;

function wireMode(mode: ProcessingMode): Record<string, number> {
  const wire: Record<string, number> = {};
  for (const field of headerModeFields) {
    const value = mode[field];
    if (value !== undefined) wire[field] = headerSendMode[value]!;
  }
  for (const field of bodyModeFields) {
    const value = mode[field];
    if (value !== undefined) wire[field] = bodySendMode[value]!;
  }
  return wire;
}
