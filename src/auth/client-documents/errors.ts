import { OAuthError } from '../errors.js';

/** Why a client metadata document could not be used: the `reason` of the `client_document.refused` event. */
export type DocumentRefusal =
  | 'disabled'
  | 'bad_url'
  | 'address_refused'
  | 'unresolvable'
  | 'unreachable'
  | 'tls'
  | 'redirect'
  | 'http_status'
  | 'content_type'
  | 'too_large'
  | 'timeout'
  | 'not_json'
  | 'client_id_mismatch'
  | 'client_secret'
  | 'auth_method'
  | 'invalid_metadata';

/**
 * A client whose `client_id` is a URL cannot be used: `invalid_client` (an unknown client, as far as the client is
 * concerned), with a message that names the URL, the rule and what was found, and a short reason for the log.
 */
export class ClientDocumentError extends OAuthError {
  readonly reason: DocumentRefusal;

  constructor(reason: DocumentRefusal, clientId: string, message: string) {
    super('invalid_client', `client metadata document ${clientId}: ${message}`);
    this.reason = reason;
  }
}
