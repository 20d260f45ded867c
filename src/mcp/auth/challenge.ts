/**
 * `WWW-Authenticate: Bearer …` challenges (RFC 6750 §3, RFC 9728 §5.1, MCP authorization 2025-11-25).
 * Parameter values are quoted strings; our values never contain `"` or `\`, but escape them anyway.
 */
export interface Challenge {
  readonly error?: 'invalid_token' | 'insufficient_scope' | 'invalid_request';
  readonly errorDescription?: string;
  readonly scope?: readonly string[];
  readonly resourceMetadata: string;
}

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

export function bearerChallenge(challenge: Challenge): string {
  const params: string[] = [];
  if (challenge.error) params.push(`error=${quoted(challenge.error)}`);
  if (challenge.errorDescription) params.push(`error_description=${quoted(challenge.errorDescription)}`);
  if (challenge.scope && challenge.scope.length > 0)
    params.push(`scope=${quoted(challenge.scope.join(' '))}`);
  params.push(`resource_metadata=${quoted(challenge.resourceMetadata)}`);
  return `Bearer ${params.join(', ')}`;
}
