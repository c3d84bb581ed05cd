/**
 * Holds whose request ended without closing them (its run was terminated, timed out, or lost): found by
 * age and released by the hold sweeper, each release recorded in the audit log with who closed it and why.
 */
import type { Knex } from 'knex';
import { audit } from './audit';
import { refund } from './ledger';

export interface HeldReservation {
  id: string;
  workspaceId: string;
  amountMicro: number;
  createdAt: Date;
}

/** Held reservations older than `minAgeSeconds`, oldest first. */
export async function findOldHolds(db: Knex, opts: { minAgeSeconds: number; limit: number }): Promise<HeldReservation[]> {
  const rows = await db('reservations')
    .where({ status: 'held' })
    .andWhereRaw(`created_at <= now() - make_interval(secs => ?)`, [opts.minAgeSeconds])
    .orderBy('created_at')
    .limit(opts.limit)
    .select('id', 'workspace_id', 'amount_micro', 'created_at');
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id, amountMicro: Number(r.amount_micro), createdAt: new Date(r.created_at) }));
}

/** The workflow a hold belongs to: reservation ids are `<workflow id>:<hop depth>`. */
export function holdWorkflowId(reservationId: string): string {
  const at = reservationId.lastIndexOf(':');
  return at > 0 ? reservationId.slice(0, at) : reservationId;
}

/**
 * Releases a hold whose request is over (the key's `reserved_micro` comes back with it) and records it in
 * the audit log, in one transaction. False when the hold was closed meanwhile.
 */
export async function releaseAbandonedHold(db: Knex, opts: { reservationId: string; actor: string; reason: string; data?: Record<string, unknown> }): Promise<boolean> {
  return db.transaction(async (trx) => {
    const row = await trx('reservations').where({ id: opts.reservationId }).forUpdate().first('status', 'workspace_id', 'amount_micro');
    if (!row || row.status !== 'held') return false;
    await refund(trx, { reservationId: opts.reservationId, reason: opts.reason });
    await audit(trx, {
      workspaceId: row.workspace_id, actor: opts.actor, action: 'reservation.release', subjectType: 'reservation', subjectId: opts.reservationId,
      data: { reason: opts.reason, amountMicro: Number(row.amount_micro), ...opts.data },
    });
    return true;
  });
}

/** More than a run can have: a request walks its model and at most 5 fallbacks. */
const MAX_HOPS = 8;

/** What became of the holds of a run that ended without closing them (`releaseHoldsOfRun`). */
export interface RunHolds {
  /** Holds given back now. */
  released: string[];
  /** What the run's hops had already been charged (a hop settled before the run was stopped). */
  chargedMicro: number;
}

/**
 * Gives back every hold still open of the run `workflowId` (its reservations are `<workflow id>:<depth>`),
 * each release audited as the hold sweeper's are. Whoever learns first that a run was stopped calls it (the
 * API answering `request_stopped`, a poll of a stopped video job): a hop still calling its model then finds
 * its hold gone and can charge nothing, so what the client is told and the books agree.
 */
export async function releaseHoldsOfRun(db: Knex, workflowId: string, opts: { actor: string; reason: string; data?: Record<string, unknown> }): Promise<RunHolds> {
  // By primary key: a run's hops are its chain's models (a chain is short).
  const ids = Array.from({ length: MAX_HOPS }, (_, depth) => `${workflowId}:${depth}`);
  const rows: Array<{ id: string; status: string; charged_micro: string | null }> = await db('reservations').whereIn('id', ids).select('id', 'status', 'charged_micro');
  const released: string[] = [];
  for (const row of rows.filter((r) => r.status === 'held')) {
    if (await releaseAbandonedHold(db, { reservationId: row.id, actor: opts.actor, reason: opts.reason, data: { workflowId, ...opts.data } })) released.push(row.id);
  }
  const chargedMicro = rows.filter((r) => r.status === 'settled').reduce((sum, r) => sum + Number(r.charged_micro ?? 0), 0);
  return { released, chargedMicro };
}
