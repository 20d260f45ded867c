import { safeEqual, sha256Base64Url } from './crypto.js';

/** RFC 7636 §4.1: 43 to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~". */
export const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

export type PkceMethod = 'S256' | 'plain';

export function pkceMatches(method: PkceMethod, challenge: string, verifier: string): boolean {
  return safeEqual(method === 'S256' ? sha256Base64Url(verifier) : verifier, challenge);
}
