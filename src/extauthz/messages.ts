import type { HeaderMap } from '../extproc/messages.js';

/**
 * The ext_authz messages as @grpc/proto-loader hands them to us and takes them back (the subset in proto/, loaded
 * with the ext_proc options). Only src/extauthz knows them.
 */

export interface Peer {
  address?: { socket_address?: { address?: string; port_value?: number }; pipe?: { path?: string } };
  certificate?: string;
}

export interface HttpRequestAttributes {
  id?: string;
  method?: string;
  headers?: Record<string, string>;
  header_map?: HeaderMap;
  path?: string;
  host?: string;
  scheme?: string;
}

export interface CheckRequest {
  attributes?: {
    source?: Peer;
    request?: { http?: HttpRequestAttributes };
  };
}

/**
 * Values go in `value`: ext_authz reads the string field (ext_proc's mutations read `raw_value`). `append_action`
 * rather than the deprecated `append` flag, which ext_authz treats as unset = overwrite too.
 */
export interface AuthzHeaderValueOption {
  header: { key: string; value: string };
  append_action: 'APPEND_IF_EXISTS_OR_ADD' | 'OVERWRITE_IF_EXISTS_OR_ADD';
}

export interface CheckResponse {
  status: { code: number; message?: string };
  ok_response?: {
    headers?: AuthzHeaderValueOption[];
    headers_to_remove?: string[];
    response_headers_to_add?: AuthzHeaderValueOption[];
  };
  denied_response?: {
    status: { code: number };
    headers?: AuthzHeaderValueOption[];
    body?: string;
  };
}
