/** A token of the gateway's own identity, for authentication-managed-identity and send-request's child of that name. */
import { PolicyError, type RunContext } from '../runtime.js';

export interface IdentityWanted {
  readonly resource: string;
  readonly clientId: string | undefined;
  readonly ignoreError: boolean;
  /** The element the failure is counted and logged for. */
  readonly element: string;
}

/**
 * The token from the engine's identities (cached there), or undefined when none was obtained and ignore-error is
 * set; otherwise the failure becomes API Management's 500 (`Internal server error`) with the reason in LastError.
 */
export async function identityToken(run: RunContext, wanted: IdentityWanted): Promise<string | undefined> {
  const { resource, clientId, element } = wanted;
  try {
    const identities = run.services.identities;
    if (identities === undefined) throw new Error('no identity is configured (the identities section)');
    const { token } = await identities.token({
      resource,
      ...(clientId !== undefined && clientId !== '' ? { clientId } : {}),
    });
    run.services.counters.count(element, 'allowed');
    run.secrets.add(token);
    return token;
  } catch (error) {
    run.services.counters.count(element, 'failed', 'TokenNotAcquired');
    // The sources' messages name the endpoint and its refusal, never a token or a secret.
    const reason = (error as Error).message;
    run.services.logger.warn(`${element}: no token`, {
      requestId: run.context.requestId.value,
      resource,
      error: reason,
    });
    if (wanted.ignoreError) return undefined;
    throw new PolicyError(
      'ManagedIdentityTokenNotAcquired',
      `Obtaining managed identity token for ${clientId ? `client_id: ${clientId} and ` : ''}resource: ${resource} failed: ${reason}`,
      500,
      'Internal server error',
    );
  }
}
