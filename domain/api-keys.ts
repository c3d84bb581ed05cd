/**
 * API keys: a fixed service prefix plus 256 bits of randomness. Only a SHA-256 hash is stored (the key's
 * entropy makes a slow hash unnecessary); lookups go by hash and the match is re-checked in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../core/ids';

export const API_KEY_PREFIX = 'sk-gw-';
/** Admin keys, for automation of the organization management API (/v1/organization). */
export const ADMIN_KEY_PREFIX = 'sk-admin-';
const SECRET_LENGTH = 43; // 43 base62 chars ~ 256 bits
const KEY_RE = new RegExp(`^(sk-gw-|sk-admin-)[0-9A-Za-z]{${SECRET_LENGTH}}$`);

export function generateApiKey(prefix: string = API_KEY_PREFIX): { key: string; hash: string; last4: string } {
  const key = `${prefix}${randomBase62(SECRET_LENGTH)}`;
  return { key, hash: hashApiKey(key), last4: key.slice(-4) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Cheap shape check before touching the database: a malformed key never costs a query. */
export function looksLikeApiKey(value: string): boolean {
  return KEY_RE.test(value);
}

export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
