/**
 * Request bodies and responses too large for workflow history (base64 images in chat, thousands of
 * embeddings) travel through object storage; small ones inline. Temporal payloads stay well under its
 * blob limits either way.
 */
import type { ObjectStorage } from '../infra/storage';

/** Inline up to this many bytes of JSON; larger goes to object storage. */
export const INLINE_PAYLOAD_LIMIT = 256 * 1024;

export type PayloadRef<T> = { inline: T } | { storageKey: string };

export async function storePayload<T>(storage: ObjectStorage, key: string, value: T): Promise<PayloadRef<T>> {
  const json = JSON.stringify(value);
  if (Buffer.byteLength(json) <= INLINE_PAYLOAD_LIMIT) return { inline: value };
  await storage.put(key, Buffer.from(json), { contentType: 'application/json' });
  return { storageKey: key };
}

/** Small per-process cache: a request's body is read by several activities in the same worker. */
const recent = new Map<string, unknown>();

export async function loadPayload<T>(storage: ObjectStorage, ref: PayloadRef<T>): Promise<T> {
  if ('inline' in ref) return ref.inline;
  const cached = recent.get(ref.storageKey);
  if (cached !== undefined) return cached as T;
  const value = JSON.parse((await storage.getBuffer(ref.storageKey)).toString('utf8')) as T;
  recent.set(ref.storageKey, value);
  if (recent.size > 64) recent.delete(recent.keys().next().value as string);
  return value;
}
