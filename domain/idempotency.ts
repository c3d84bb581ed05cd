/**
 * `Idempotency-Key` on POSTs: the key (scoped to the workspace and endpoint) names the request's workflow,
 * so a retry joins the first run (still running or finished) instead of calling the model again. The body's
 * hash is kept with the key: the same key with another body is refused.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { ConflictError, InvalidRequestError } from '../core/errors';

export interface IdempotencyClaim {
  /** Deterministic id for the resource (workflow) this key names. */
  resourceId: string;
  /** False when an earlier request already claimed the key (this one replays it). */
  first: boolean;
}

/** Stable JSON (sorted keys) so equal bodies hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

export function readIdempotencyKey(header: string | undefined): string | null {
  if (!header) return null;
  const key = header.trim();
  if (!key || key.length > 255) throw new InvalidRequestError('Idempotency-Key must be 1 to 255 characters.', { param: 'Idempotency-Key', code: 'invalid_idempotency_key' });
  return key;
}

export async function claimIdempotencyKey(db: Knex, opts: { workspaceId: string; scope: string; key: string; bodyHash: string; prefix: string; resourceId?: string }): Promise<IdempotencyClaim> {
  // A resource with ids of its own (a video job's `vgen_...`) passes the id to remember for the key.
  const resourceId = opts.resourceId ?? `${opts.prefix}-${opts.workspaceId}-${sha256(`${opts.scope}\n${opts.key}`).slice(0, 32)}`;
  const { rows } = await db.raw(
    `insert into idempotency_keys (workspace_id, scope, key, body_hash, resource_id) values (?, ?, ?, ?, ?)
     on conflict (workspace_id, scope, key) do nothing returning resource_id`,
    [opts.workspaceId, opts.scope, opts.key, opts.bodyHash, resourceId],
  );
  if (rows.length === 1) return { resourceId, first: true };
  const existing = await db('idempotency_keys').where({ workspace_id: opts.workspaceId, scope: opts.scope, key: opts.key }).first('body_hash', 'resource_id');
  if (existing.body_hash !== opts.bodyHash) {
    throw new ConflictError('This Idempotency-Key was already used with a different request body. Use a new key for a new request.', {
      status: 422, code: 'idempotency_key_reused', param: 'Idempotency-Key',
    });
  }
  return { resourceId: existing.resource_id, first: false };
}
