/** One-time secrets sent to people (session cookies, e-mail links): 256 random bits, only a hash stored. */
import { createHash, randomBytes } from 'node:crypto';

export function newSecretToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashSecretToken(token) };
}

export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A well-formed token (43 base64url characters) is checked before any query. */
export function looksLikeSecretToken(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}
