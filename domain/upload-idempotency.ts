/**
 * `Idempotency-Key` on uploads. Unlike a JSON request, an upload's body hash is known only once its bytes
 * were read, so a key is claimed *before* reading, as pending (`pending:<token>:<heartbeat ms>`), and
 * completed with the body's hash in the transaction that records the file. Meanwhile:
 *
 * - a request with the same key waits (without reading its own body) until the first one completes or
 *   gives up; then it reads its body only to hash it, and either replays the first file (same hash) or is
 *   refused with 422 (another body), like api/idempotency.ts does for JSON requests;
 * - an owner that fails releases the key (a refused upload is not remembered; the client may retry);
 * - an owner whose process died stops heart-beating, and after STALE_MS a waiter takes the key over under
 *   a new file id (the old owner's commit then fails its compare-and-set, so it cannot record a file).
 *
 * Heartbeat times come from Postgres's clock, so API processes with skewed clocks agree on staleness.
 */
import type { Knex } from 'knex';
import { ConflictError, InvalidRequestError } from '../core/errors';
import { newId, randomBase62 } from '../core/ids';
import { sha256 } from './idempotency';

export const UPLOAD_SCOPE = 'files.create';
const HEARTBEAT_MS = 5_000;
const STALE_MS = 30_000;
const POLL_MS = 150;
/** A waiter gives up after this long (the first upload is then still running, and heart-beating). */
const MAX_WAIT_MS = 20 * 60_000;

const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export interface OwnedUploadKey {
  kind: 'owner';
  fileId: string;
  /** Completes the claim inside the transaction that records the file; throws if the key was taken over. */
  complete(trx: Knex.Transaction, bodyHash: string): Promise<void>;
  /** Forgets the claim after a failed upload. */
  release(): Promise<void>;
  stopHeartbeat(): void;
}

export interface CompletedUploadKey {
  kind: 'completed';
  fileId: string;
  bodyHash: string;
}

/** What makes two uploads "the same request". */
export function uploadBodyHash(u: { purpose: string; filename: string; sha256: string }): string {
  return sha256(`${UPLOAD_SCOPE}\n${u.purpose}\n${u.filename}\n${u.sha256}`);
}

function parsePending(bodyHash: string): { token: string; at: number } | null {
  const m = /^pending:([A-Za-z0-9]+):(\d+)$/.exec(bodyHash);
  return m ? { token: m[1], at: Number(m[2]) } : null;
}

export async function claimUploadKey(db: Knex, opts: { workspaceId: string; key: string; clientGone: () => boolean }): Promise<OwnedUploadKey | CompletedUploadKey> {
  const where = { workspace_id: opts.workspaceId, scope: UPLOAD_SCOPE, key: opts.key };
  const deadline = Date.now() + MAX_WAIT_MS;
  for (;;) {
    const token = randomBase62(20);
    const fileId = newId('file');
    const { rows: inserted } = await db.raw(
      `insert into idempotency_keys (workspace_id, scope, key, body_hash, resource_id)
       values (?, ?, ?, 'pending:' || ? || ':' || ${NOW_MS}, ?)
       on conflict (workspace_id, scope, key) do nothing returning resource_id`,
      [opts.workspaceId, UPLOAD_SCOPE, opts.key, token, fileId],
    );
    if (inserted.length === 1) return ownedKey(db, where, token, fileId);

    const { rows } = await db.raw(
      `select body_hash, resource_id, ${NOW_MS} as now_ms from idempotency_keys where workspace_id = ? and scope = ? and key = ?`,
      [opts.workspaceId, UPLOAD_SCOPE, opts.key],
    );
    const row = rows[0];
    if (!row) continue;
    const pending = parsePending(row.body_hash);
    if (!pending) return { kind: 'completed', fileId: row.resource_id, bodyHash: row.body_hash };
    if (Number(row.now_ms) - pending.at > STALE_MS) {
      const took = await db('idempotency_keys').where({ ...where, body_hash: row.body_hash })
        .update({ body_hash: db.raw(`'pending:' || ? || ':' || ${NOW_MS}`, [token]), resource_id: fileId });
      if (took === 1) return ownedKey(db, where, token, fileId);
      continue;
    }
    if (opts.clientGone()) throw new InvalidRequestError('The client went away while waiting for an upload with the same Idempotency-Key.', { code: 'upload_incomplete' });
    if (Date.now() > deadline) {
      throw new ConflictError('An upload with this Idempotency-Key is still in progress. Retry later.', { code: 'idempotency_key_in_use', param: 'Idempotency-Key' });
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function ownedKey(db: Knex, where: Record<string, string>, token: string, fileId: string): OwnedUploadKey {
  const mine = (q: Knex.QueryBuilder) => q.where(where).andWhere('body_hash', 'like', `pending:${token}:%`);
  const timer = setInterval(() => {
    void mine(db('idempotency_keys')).update({ body_hash: db.raw(`'pending:' || ? || ':' || ${NOW_MS}`, [token]) }).catch(() => undefined);
  }, HEARTBEAT_MS);
  timer.unref();
  return {
    kind: 'owner',
    fileId,
    async complete(trx, bodyHash) {
      const updated = await mine(trx('idempotency_keys')).update({ body_hash: bodyHash });
      if (updated !== 1) {
        throw new ConflictError('Another upload took over this Idempotency-Key while this one was stalled. Retry to get its result.', {
          code: 'idempotency_key_in_use', param: 'Idempotency-Key',
        });
      }
    },
    async release() {
      clearInterval(timer);
      await mine(db('idempotency_keys')).delete();
    },
    stopHeartbeat() {
      clearInterval(timer);
    },
  };
}
