/**
 * The credit ledger. Every movement is an append-only row with a unique idempotency key; bucket balances
 * move in the same transaction, under row locks, so a balance never goes negative and a retried step is
 * a no-op. Amounts are integer micro-credits.
 *
 * A request's rows: `reserve` (-R, the hold) when it starts; on success `release` (+R, the hold comes back)
 * and `settle` (-C, the exact charge) in one transaction; on failure `refund` (+R). So the ledger's sum over
 * a request is -C or 0, and sum(ledger) == sum(bucket balances) at all times.
 */
import type { Knex } from 'knex';
import { InsufficientCreditsError, PermissionDeniedError } from './errors';

/** A knex handle or a transaction: inside a caller's transaction each operation nests as a savepoint. */
export type Db = Knex | Knex.Transaction;

export type LedgerKind = 'grant' | 'topup' | 'reserve' | 'settle' | 'release' | 'refund' | 'expire' | 'rollover' | 'adjust';

export interface Allocation {
  bucketId: number;
  amountMicro: number;
}

export interface Reservation {
  id: string;
  workspaceId: string;
  apiKeyId: string | null;
  amountMicro: number;
  status: 'held' | 'settled' | 'released';
  allocations: Allocation[];
  chargedMicro: number | null;
}

export interface Balance {
  totalMicro: number;
  planMicro: number;
  topupMicro: number;
}

/** 403 when a key's cost cap would be passed (a plain PermissionDeniedError, so it crosses Temporal as one). */
export function costCapExceeded(capMicro: number): PermissionDeniedError {
  return new PermissionDeniedError(`This API key reached its cost cap of ${capMicro / 1_000_000} credits. Raise the cap or use another key.`, { code: 'key_cost_cap_exceeded' });
}

/** Spendable buckets in spending order: plan credits (soonest expiry first) before topups. */
async function lockSpendableBuckets(trx: Knex.Transaction, workspaceId: string): Promise<Array<{ id: number; balance_micro: number }>> {
  const { rows } = await trx.raw(
    `select id, balance_micro from credit_buckets
      where workspace_id = ? and balance_micro > 0 and (expires_at is null or expires_at > now())
      order by (kind = 'topup'), expires_at nulls last, id
      for update`,
    [workspaceId],
  );
  return rows;
}

async function appendRow(trx: Knex.Transaction, row: {
  workspaceId: string; bucketId: number | null; kind: LedgerKind; amountMicro: number; idempotencyKey: string;
  reservationId?: string | null; requestId?: string | null; apiKeyId?: string | null; model?: string | null; meta?: unknown;
}): Promise<boolean> {
  const { rows } = await trx.raw(
    `insert into credit_ledger (workspace_id, bucket_id, kind, amount_micro, idempotency_key, reservation_id, request_id, api_key_id, model, meta)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (idempotency_key) do nothing returning id`,
    [row.workspaceId, row.bucketId, row.kind, row.amountMicro, row.idempotencyKey, row.reservationId ?? null, row.requestId ?? null,
      row.apiKeyId ?? null, row.model ?? null, row.meta === undefined ? null : JSON.stringify(row.meta)],
  );
  return rows.length === 1;
}

async function moveBucket(trx: Knex.Transaction, bucketId: number, deltaMicro: number): Promise<void> {
  await trx.raw('update credit_buckets set balance_micro = balance_micro + ? where id = ?', [deltaMicro, bucketId]);
}

/** Adds topup credits (never expire). Returns false when the idempotency key was already used. */
export async function topUp(db: Db, opts: { workspaceId: string; amountMicro: number; idempotencyKey: string; actor?: string }): Promise<boolean> {
  if (!Number.isSafeInteger(opts.amountMicro) || opts.amountMicro <= 0) throw new RangeError('topup amount must be a positive integer of micro-credits');
  return db.transaction(async (trx) => {
    let bucket = await trx('credit_buckets').where({ workspace_id: opts.workspaceId, kind: 'topup' }).forUpdate().first('id');
    if (!bucket) [bucket] = await trx('credit_buckets').insert({ workspace_id: opts.workspaceId, kind: 'topup', balance_micro: 0 }, ['id']);
    const inserted = await appendRow(trx, {
      workspaceId: opts.workspaceId, bucketId: bucket.id, kind: 'topup', amountMicro: opts.amountMicro,
      idempotencyKey: opts.idempotencyKey, meta: opts.actor ? { actor: opts.actor } : undefined,
    });
    if (inserted) await moveBucket(trx, bucket.id, opts.amountMicro);
    return inserted;
  });
}

/**
 * Grants a cycle's plan credits into that cycle's bucket (unique per workspace and cycle), expiring at
 * `expiresAt`. Returns false when this grant already happened.
 */
export async function grantPlanCredits(db: Db, opts: { workspaceId: string; cycle: string; amountMicro: number; expiresAt: Date; kind?: 'grant' | 'rollover'; idempotencyKey: string; meta?: unknown }): Promise<boolean> {
  const run = async (trx: Knex.Transaction) => {
    await trx.raw(
      `insert into credit_buckets (workspace_id, kind, cycle, expires_at, balance_micro) values (?, 'plan', ?, ?, 0)
       on conflict (workspace_id, cycle) where kind = 'plan' do nothing`,
      [opts.workspaceId, opts.cycle, opts.expiresAt],
    );
    const bucket = await trx('credit_buckets').where({ workspace_id: opts.workspaceId, kind: 'plan', cycle: opts.cycle }).forUpdate().first('id');
    const inserted = await appendRow(trx, {
      workspaceId: opts.workspaceId, bucketId: bucket.id, kind: opts.kind ?? 'grant', amountMicro: opts.amountMicro,
      idempotencyKey: opts.idempotencyKey, meta: opts.meta ?? { cycle: opts.cycle },
    });
    if (inserted && opts.amountMicro !== 0) await moveBucket(trx, bucket.id, opts.amountMicro);
    return inserted;
  };
  // Inside a caller's transaction this nests as a savepoint.
  return db.transaction(run);
}

/**
 * Empties a plan bucket that reached its end (`expire`), returning what it held. Idempotent by key.
 */
export async function expireBucket(trx: Knex.Transaction, opts: { workspaceId: string; bucketId: number; idempotencyKey: string; meta?: unknown }): Promise<number> {
  const bucket = await trx('credit_buckets').where({ id: opts.bucketId }).forUpdate().first('balance_micro');
  if (!bucket || bucket.balance_micro === 0) {
    await appendRow(trx, { workspaceId: opts.workspaceId, bucketId: opts.bucketId, kind: 'expire', amountMicro: 0, idempotencyKey: opts.idempotencyKey, meta: opts.meta });
    return 0;
  }
  const inserted = await appendRow(trx, {
    workspaceId: opts.workspaceId, bucketId: opts.bucketId, kind: 'expire', amountMicro: -bucket.balance_micro, idempotencyKey: opts.idempotencyKey, meta: opts.meta,
  });
  if (!inserted) return 0;
  await moveBucket(trx, opts.bucketId, -bucket.balance_micro);
  return bucket.balance_micro;
}

/**
 * Carries up to `capMicro` of a plan bucket's balance into a later cycle's plan bucket: a `rollover` row
 * out of the old bucket and one into the new, so `expire` rows keep meaning exactly what was lost.
 * Returns what moved (0 when this rollover already happened). Idempotent by key.
 */
export async function rollOverBucket(trx: Knex.Transaction, opts: {
  workspaceId: string; fromBucketId: number; toCycle: string; toExpiresAt: Date; capMicro: number | null; idempotencyKey: string; meta?: unknown;
}): Promise<number> {
  const bucket = await trx('credit_buckets').where({ id: opts.fromBucketId }).forUpdate().first('balance_micro');
  const moving = Math.min(Number(bucket?.balance_micro ?? 0), opts.capMicro ?? Number.MAX_SAFE_INTEGER);
  if (moving <= 0) return 0;
  const inserted = await appendRow(trx, {
    workspaceId: opts.workspaceId, bucketId: opts.fromBucketId, kind: 'rollover', amountMicro: -moving, idempotencyKey: `${opts.idempotencyKey}:out`, meta: opts.meta,
  });
  if (!inserted) return 0;
  await moveBucket(trx, opts.fromBucketId, -moving);
  await grantPlanCredits(trx, {
    workspaceId: opts.workspaceId, cycle: opts.toCycle, amountMicro: moving, expiresAt: opts.toExpiresAt, kind: 'rollover',
    idempotencyKey: `${opts.idempotencyKey}:in`, meta: opts.meta,
  });
  return moving;
}

export async function getBalance(db: Db, workspaceId: string): Promise<Balance> {
  const { rows } = await db.raw(
    `select coalesce(sum(balance_micro) filter (where kind = 'plan'), 0)::bigint as plan,
            coalesce(sum(balance_micro) filter (where kind = 'topup'), 0)::bigint as topup
       from credit_buckets where workspace_id = ? and (expires_at is null or expires_at > now())`,
    [workspaceId],
  );
  const plan = Number(rows[0].plan);
  const topup = Number(rows[0].topup);
  return { totalMicro: plan + topup, planMicro: plan, topupMicro: topup };
}

/**
 * Holds `amountMicro` for a request. Idempotent on `reservationId` (derived from the workflow), so an
 * activity retry returns the first outcome. Throws InsufficientCreditsError (402) when the spendable
 * balance cannot cover it and a 403 `key_cost_cap_exceeded` when the key's cap would be passed.
 */
export async function reserve(db: Db, opts: { reservationId: string; workspaceId: string; apiKeyId?: string | null; amountMicro: number; requestId?: string; model?: string }): Promise<Reservation> {
  if (!Number.isSafeInteger(opts.amountMicro) || opts.amountMicro < 0) throw new RangeError('reservation must be a non-negative integer of micro-credits');
  return db.transaction(async (trx) => {
    const existing = await trx('reservations').where({ id: opts.reservationId }).first();
    if (existing) return toReservation(existing);

    // Only keys with a cost cap track their holds; others never take a lock on their key row. Lock order
    // everywhere: reservation row, then key row, then buckets, so concurrent requests cannot deadlock.
    if (opts.apiKeyId) {
      const { rows } = await trx.raw(
        `update api_keys set reserved_micro = reserved_micro + ?
          where id = ? and cost_cap_micro is not null and spent_micro + reserved_micro + ? <= cost_cap_micro
          returning id`,
        [opts.amountMicro, opts.apiKeyId, opts.amountMicro],
      );
      if (rows.length === 0) {
        const key = await trx('api_keys').where({ id: opts.apiKeyId }).first('cost_cap_micro');
        if (key?.cost_cap_micro != null) throw costCapExceeded(Number(key.cost_cap_micro));
      }
    }

    const buckets = await lockSpendableBuckets(trx, opts.workspaceId);
    const allocations: Allocation[] = [];
    let remaining = opts.amountMicro;
    for (const bucket of buckets) {
      if (remaining === 0) break;
      const take = Math.min(bucket.balance_micro, remaining);
      allocations.push({ bucketId: bucket.id, amountMicro: take });
      remaining -= take;
    }
    if (remaining > 0) throw new InsufficientCreditsError();

    for (const a of allocations) {
      await moveBucket(trx, a.bucketId, -a.amountMicro);
      await appendRow(trx, {
        workspaceId: opts.workspaceId, bucketId: a.bucketId, kind: 'reserve', amountMicro: -a.amountMicro,
        idempotencyKey: `${opts.reservationId}:reserve:${a.bucketId}`, reservationId: opts.reservationId,
        requestId: opts.requestId, apiKeyId: opts.apiKeyId, model: opts.model,
      });
    }
    const [row] = await trx('reservations').insert({
      id: opts.reservationId, workspace_id: opts.workspaceId, api_key_id: opts.apiKeyId ?? null, request_id: opts.requestId ?? null,
      amount_micro: opts.amountMicro, status: 'held', allocations: JSON.stringify(allocations),
    }, '*');
    return toReservation(row);
  });
}

export interface SettleOutcome {
  reservation: Reservation;
  /** What was actually charged (may be below the asked amount only when the balance ran dry). */
  chargedMicro: number;
  /** Part of the asked charge no balance could cover (logged, never charged). */
  uncoveredMicro: number;
}

/**
 * Charges the exact cost and lets go of the hold, in one transaction. Idempotent: settling a reservation
 * that is no longer held returns its recorded outcome.
 */
export async function settle(db: Db, opts: { reservationId: string; chargeMicro: number; model?: string; meta?: unknown }): Promise<SettleOutcome> {
  if (!Number.isSafeInteger(opts.chargeMicro) || opts.chargeMicro < 0) throw new RangeError('charge must be a non-negative integer of micro-credits');
  return db.transaction(async (trx) => {
    const row = await trx('reservations').where({ id: opts.reservationId }).forUpdate().first();
    if (!row) throw new Error(`reservation ${opts.reservationId} does not exist`);
    const reservation = toReservation(row);
    if (reservation.status !== 'held') {
      return { reservation, chargedMicro: reservation.chargedMicro ?? 0, uncoveredMicro: 0 };
    }
    const base = { workspaceId: reservation.workspaceId, reservationId: reservation.id, requestId: row.request_id, apiKeyId: reservation.apiKeyId, model: opts.model };
    if (reservation.apiKeyId) {
      await trx.raw('update api_keys set reserved_micro = greatest(reserved_micro - ?, 0) where id = ? and cost_cap_micro is not null', [reservation.amountMicro, reservation.apiKeyId]);
    }

    // The hold comes back to the buckets it came from...
    for (const a of reservation.allocations) {
      await moveBucket(trx, a.bucketId, a.amountMicro);
      await appendRow(trx, { ...base, bucketId: a.bucketId, kind: 'release', amountMicro: a.amountMicro, idempotencyKey: `${reservation.id}:release:${a.bucketId}` });
    }
    // ...and the exact charge is drawn in spending order (normally from those same buckets).
    let remaining = opts.chargeMicro;
    if (remaining > 0) {
      for (const bucket of await lockSpendableBuckets(trx, reservation.workspaceId)) {
        if (remaining === 0) break;
        const take = Math.min(bucket.balance_micro, remaining);
        await moveBucket(trx, bucket.id, -take);
        await appendRow(trx, { ...base, bucketId: bucket.id, kind: 'settle', amountMicro: -take, idempotencyKey: `${reservation.id}:settle:${bucket.id}`, meta: opts.meta });
        remaining -= take;
      }
    }
    const charged = opts.chargeMicro - remaining;
    if (reservation.apiKeyId && charged > 0) {
      await trx.raw('update api_keys set spent_micro = spent_micro + ? where id = ? and cost_cap_micro is not null', [charged, reservation.apiKeyId]);
    }
    const [updated] = await trx('reservations').where({ id: reservation.id }).update({ status: 'settled', charged_micro: charged, closed_at: trx.fn.now() }, '*');
    return { reservation: toReservation(updated), chargedMicro: charged, uncoveredMicro: remaining };
  });
}

/** Gives the whole hold back (the request failed or was refused). Idempotent. */
export async function refund(db: Db, opts: { reservationId: string; reason: string }): Promise<Reservation> {
  return db.transaction(async (trx) => {
    const row = await trx('reservations').where({ id: opts.reservationId }).forUpdate().first();
    if (!row) throw new Error(`reservation ${opts.reservationId} does not exist`);
    const reservation = toReservation(row);
    if (reservation.status !== 'held') return reservation;
    if (reservation.apiKeyId) {
      await trx.raw('update api_keys set reserved_micro = greatest(reserved_micro - ?, 0) where id = ? and cost_cap_micro is not null', [reservation.amountMicro, reservation.apiKeyId]);
    }
    for (const a of reservation.allocations) {
      await moveBucket(trx, a.bucketId, a.amountMicro);
      await appendRow(trx, {
        workspaceId: reservation.workspaceId, bucketId: a.bucketId, kind: 'refund', amountMicro: a.amountMicro,
        idempotencyKey: `${reservation.id}:refund:${a.bucketId}`, reservationId: reservation.id, requestId: row.request_id,
        apiKeyId: reservation.apiKeyId, meta: { reason: opts.reason },
      });
    }
    const [updated] = await trx('reservations').where({ id: reservation.id }).update({ status: 'released', charged_micro: 0, closed_at: trx.fn.now() }, '*');
    return toReservation(updated);
  });
}

/** Sum of the workspace's ledger; equals the sum of its bucket balances (the invariant tests check). */
export async function ledgerSum(db: Db, workspaceId: string): Promise<{ ledgerMicro: number; bucketsMicro: number }> {
  const { rows } = await db.raw(
    `select (select coalesce(sum(amount_micro), 0) from credit_ledger where workspace_id = ?)::bigint as ledger,
            (select coalesce(sum(balance_micro), 0) from credit_buckets where workspace_id = ?)::bigint as buckets`,
    [workspaceId, workspaceId],
  );
  return { ledgerMicro: Number(rows[0].ledger), bucketsMicro: Number(rows[0].buckets) };
}

function toReservation(row: Record<string, any>): Reservation {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    apiKeyId: row.api_key_id,
    amountMicro: Number(row.amount_micro),
    status: row.status,
    allocations: typeof row.allocations === 'string' ? JSON.parse(row.allocations) : row.allocations,
    chargedMicro: row.charged_micro === null ? null : Number(row.charged_micro),
  };
}
