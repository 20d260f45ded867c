import { describe, expect, it } from 'vitest';
import { OAuthError, toOAuthError } from '../../../src/auth/errors.js';
import { StateUnavailableError } from '../../../src/state/limits.js';

describe('error catalog', () => {
  it('keeps a client error as it is', () => {
    const error = new OAuthError('invalid_grant', 'code already used');
    expect(toOAuthError(error)).toBe(error);
  });

  it('shows an internal fault only as server_error 500, without its details', () => {
    const error = toOAuthError(new Error('secret stack detail'));
    expect(error.code).toBe('server_error');
    expect(error.status).toBe(500);
    expect(error.message).not.toContain('secret');
  });

  it('turns unreachable shared state (Redis down) into 503 temporarily_unavailable with Retry-After', () => {
    const error = toOAuthError(new StateUnavailableError('redis unavailable (end) for consume code'));
    expect(error.code).toBe('temporarily_unavailable');
    expect(error.status).toBe(503);
    expect(error.headers).toEqual({ 'Retry-After': '1' });
    expect(error.message).not.toContain('redis');
  });
});
