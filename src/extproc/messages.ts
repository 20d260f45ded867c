/**
 * The shapes of the ext_proc messages as @grpc/proto-loader hands them to us and takes them back, for the subset in
 * proto/ (loaded with keepCase, oneofs, longs as strings, enums as strings, no defaults). Only this module and the
 * rest of src/extproc know them.
 */

export interface HeaderValue {
  key: string;
  value?: string;
  raw_value?: Buffer | Uint8Array;
}

export interface HeaderMap {
  headers?: HeaderValue[];
}

export interface HttpHeaders {
  headers?: HeaderMap;
  end_of_stream?: boolean;
}

export interface HttpBody {
  body?: Buffer;
  end_of_stream?: boolean;
}

export interface HttpTrailers {
  trailers?: HeaderMap;
}

/** google.protobuf.Struct values as proto-loader decodes them. */
export interface StructValue {
  nullValue?: string;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: Struct;
  listValue?: { values?: StructValue[] };
  // proto-loader with oneofs: true also names the chosen member.
  kind?: string;
  null_value?: string;
  number_value?: number;
  string_value?: string;
  bool_value?: boolean;
  struct_value?: Struct;
  list_value?: { values?: StructValue[] };
}

export interface Struct {
  fields?: Record<string, StructValue>;
}

export type RequestKind =
  | 'request_headers'
  | 'request_body'
  | 'request_trailers'
  | 'response_headers'
  | 'response_body'
  | 'response_trailers';

export interface ProcessingRequest {
  request?: RequestKind;
  request_headers?: HttpHeaders;
  response_headers?: HttpHeaders;
  request_body?: HttpBody;
  response_body?: HttpBody;
  request_trailers?: HttpTrailers;
  response_trailers?: HttpTrailers;
  attributes?: Record<string, Struct>;
  observability_mode?: boolean;
}

export interface HeaderValueOption {
  header: { key: string; raw_value: Buffer };
  append?: { value: boolean };
}

export interface HeaderMutation {
  set_headers?: HeaderValueOption[];
  remove_headers?: string[];
}

export interface BodyMutation {
  body?: Buffer;
  clear_body?: boolean;
}

export interface CommonResponse {
  status?: 'CONTINUE' | 'CONTINUE_AND_REPLACE';
  header_mutation?: HeaderMutation;
  body_mutation?: BodyMutation;
  clear_route_cache?: boolean;
}

export type BodySendMode = 'NONE' | 'STREAMED' | 'BUFFERED' | 'BUFFERED_PARTIAL';
export type HeaderSendMode = 'DEFAULT' | 'SEND' | 'SKIP';

export interface ProcessingMode {
  request_header_mode?: HeaderSendMode;
  response_header_mode?: HeaderSendMode;
  request_body_mode?: BodySendMode;
  response_body_mode?: BodySendMode;
  request_trailer_mode?: HeaderSendMode;
  response_trailer_mode?: HeaderSendMode;
}

export interface ImmediateResponse {
  status: { code: number };
  headers?: HeaderMutation;
  body?: Buffer;
  details?: string;
}

export type ResponseKind = RequestKind | 'immediate_response';

export interface ProcessingResponse {
  request_headers?: { response?: CommonResponse };
  response_headers?: { response?: CommonResponse };
  request_body?: { response?: CommonResponse };
  response_body?: { response?: CommonResponse };
  request_trailers?: { header_mutation?: HeaderMutation };
  response_trailers?: { header_mutation?: HeaderMutation };
  immediate_response?: ImmediateResponse;
  mode_override?: ProcessingMode;
  /** Set on Envoy's stream under the namespaces its filter accepts (`metadata_options.receiving_namespaces`). */
  dynamic_metadata?: Struct;
  /** Alone in its message: restarts Envoy's timer for the pending phase (google.protobuf.Duration). */
  override_message_timeout?: { seconds: number; nanos: number };
}
