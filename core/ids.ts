import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 string; `length` 22 carries ~131 bits. Rejection sampling keeps it unbiased. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdPrefix = 'ws' | 'key' | 'file' | 'vgen' | 'alert' | 'mgen' | 'user' | 'sess' | 'invite' | 'chat' | 'msg' | 'proj' | 'pgf' | 'pay' | 'batch' | 'msgbatch';

/** Resource ids: `ws_…`, `key_…`, `file_…`, `vgen_…`, `alert_…`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

export function newRequestId(): string {
  return randomUUID();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
