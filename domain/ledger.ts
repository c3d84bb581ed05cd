/**
 * The credit ledger. Every movement is an append-only row with a unique idempotency key; bucket balances
 * move in the same transaction, under row locks, so a balance never goes negative and a retried step is
 * a no-op. Amounts are integer micro-credits.
 *
 * A request's rows: `reserve` (-R, the hold) when it starts; on success `release` (+R, the hold comes back)
 * and `settle` (-C, the exact charge) in one transaction; on failure `refund` (+R). So the ledger's sum over
 * a request is -C or 0, and sum(ledger) == sum(bucket balances) at all times. A charge above what the
 * balance covers is not dropped: the rest goes to the workspace's debt bucket (negative), which the next
 * grant or topup pays first (`repay`). The request path's steps
 * (reserve, settle, refund) are single database calls to the functions in
 * db/migrations/20261122220000_ledger_functions.ts; grants, topups and expiry run here.
 */
import { preparedRows } from '../db/prepared';
import type { Knex } from 'knex';
import { InsufficientCreditsError, PermissionDeniedError } from '../core/errors';
import { MICRO_PER_CREDIT, microToCredits } from '../core/money';
import { usageRecordJson, type UsageRecord } from './usage-record';

/** A knex handle or a transaction: inside a caller's transaction each operation nests as a savepoint. */
export type Db = Knex | Knex.Transaction;

export type LedgerKind = 'grant' | 'topup' | 'reserve' | 'settle' | 'release' | 'refund' | 'expire' | 'rollover' | 'adjust' | 'repay';

export interface Allocation {
  bucketId: number;
  amountMicro: number;
}

export interface Reservation {
  id: string;
  workspaceId: string;
  apiKeyId: string | null;
  /** The request that took the hold. */
  requestId: string | null;
  amountMicro: number;
  status: 'held' | 'settled' | 'released';
  allocations: Allocation[];
  chargedMicro: number | null;
}

export interface Balance {
  /** Plan and topup credits less the debt (negative while the debt is larger). */
  totalMicro: number;
  planMicro: number;
  topupMicro: number;
  /** Charges no balance covered, owed until the next grant or topup pays them. */
  debtMicro: number;
}

/** Where a capped key stood when a hold was refused: its cap, what it spent, what its requests in flight hold, and the hold asked for (micro-credits). */
export interface CapStanding {
  capMicro: number;
  /** Null when not known. */
  spentMicro: number | null;
  reservedMicro: number | null;
  holdMicro: number;
}

/**
 * 403 `key_cost_cap_exceeded` when a key's cost cap would be passed (a plain PermissionDeniedError, so it
 * crosses Temporal as one). It says which: the cap is used up, or this request's hold (the most it may cost)
 * is more than what is left under the cap, which a request with a smaller hold could still use.
 */
export function costCapExceeded(standing: CapStanding): PermissionDeniedError {
  const credits = (micro: number) => `${microToCredits(micro)} credit${micro === MICRO_PER_CREDIT ? '' : 's'}`;
  const { capMicro, spentMicro, reservedMicro, holdMicro } = standing;
  const code = { code: 'key_cost_cap_exceeded' };
  if (spentMicro === null || reservedMicro === null) {
    return new PermissionDeniedError(`This API key reached its cost cap of ${credits(capMicro)}. Raise the cap or use another key.`, code);
  }
  const used = `${credits(spentMicro)} spent${reservedMicro > 0 ? `, ${credits(reservedMicro)} held by requests in progress` : ''}`;
  const leftMicro = Math.max(0, capMicro - spentMicro - reservedMicro);
  if (leftMicro === 0) return new PermissionDeniedError(`This API key reached its cost cap of ${credits(capMicro)} (${used}). Raise the cap or use another key.`, code);
  return new PermissionDeniedError(
    `This request may cost up to ${credits(holdMicro)} (the hold taken before it runs), more than the ${credits(leftMicro)} left under this API key's cost cap of ${credits(capMicro)} (${used}). ` +
    'Ask for less (a lower max_tokens, fewer or smaller outputs) or raise the cap.',
    code,
  );
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
    if (inserted) {
      await moveBucket(trx, bucket.id, opts.amountMicro);
      await repayDebt(trx, { workspaceId: opts.workspaceId, fromBucketId: bucket.id, idempotencyKey: opts.idempotencyKey });
    }
    return inserted;
  });
}

/**
 * Takes bought credits back (a refunded or disputed payment): out of the topup bucket as far as it holds
 * them, the rest (credits already spent) into the debt bucket, which the next grant or topup pays first.
 * `adjust` rows; idempotent by key. Returns how much became debt.
 */
export async function takeBack(db: Db, opts: { workspaceId: string; amountMicro: number; idempotencyKey: string; meta?: unknown }): Promise<{ debtMicro: number }> {
  if (!Number.isSafeInteger(opts.amountMicro) || opts.amountMicro <= 0) throw new RangeError('amount taken back must be a positive integer of micro-credits');
  return db.transaction(async (trx) => {
    const topup = await trx('credit_buckets').where({ workspace_id: opts.workspaceId, kind: 'topup' }).forUpdate().first('id', 'balance_micro');
    const fromTopup = Math.min(Number(topup?.balance_micro ?? 0), opts.amountMicro);
    const base = { workspaceId: opts.workspaceId, kind: 'adjust' as const, meta: opts.meta };
    if (fromTopup > 0) {
      if (!(await appendRow(trx, { ...base, bucketId: topup.id, amountMicro: -fromTopup, idempotencyKey: `${opts.idempotencyKey}:topup` }))) return { debtMicro: 0 };
      await moveBucket(trx, topup.id, -fromTopup);
    }
    const rest = opts.amountMicro - fromTopup;
    if (rest === 0) return { debtMicro: 0 };
    await trx.raw(`insert into credit_buckets (workspace_id, kind, balance_micro) values (?, 'debt', 0) on conflict (workspace_id) where kind = 'debt' do nothing`, [opts.workspaceId]);
    const debt = await trx('credit_buckets').where({ workspace_id: opts.workspaceId, kind: 'debt' }).forUpdate().first('id');
    if (!(await appendRow(trx, { ...base, bucketId: debt.id, amountMicro: -rest, idempotencyKey: `${opts.idempotencyKey}:debt` }))) return { debtMicro: 0 };
    await moveBucket(trx, debt.id, -rest);
    return { debtMicro: rest };
  });
}

/**
 * Pays the workspace's debt (if any) first out of credits just added to `fromBucketId`: a `repay` row out of
 * that bucket and one into the debt bucket. Locks the debt bucket after the paying one (the order settlement
 * takes them in too). Returns what was paid.
 */
async function repayDebt(trx: Knex.Transaction, opts: { workspaceId: string; fromBucketId: number; idempotencyKey: string }): Promise<number> {
  const debt = await trx('credit_buckets').where({ workspace_id: opts.workspaceId, kind: 'debt' }).forUpdate().first('id', 'balance_micro');
  if (!debt || Number(debt.balance_micro) === 0) return 0;
  const from = await trx('credit_buckets').where({ id: opts.fromBucketId }).first('balance_micro');
  const paying = Math.min(-Number(debt.balance_micro), Number(from.balance_micro));
  if (paying <= 0) return 0;
  const base = { workspaceId: opts.workspaceId, kind: 'repay' as const, meta: { debtBucketId: debt.id, fromBucketId: opts.fromBucketId } };
  if (!(await appendRow(trx, { ...base, bucketId: opts.fromBucketId, amountMicro: -paying, idempotencyKey: `${opts.idempotencyKey}:repay:out` }))) return 0;
  await appendRow(trx, { ...base, bucketId: debt.id, amountMicro: paying, idempotencyKey: `${opts.idempotencyKey}:repay:in` });
  await moveBucket(trx, opts.fromBucketId, -paying);
  await moveBucket(trx, debt.id, paying);
  return paying;
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
    if (inserted && opts.amountMicro !== 0) {
      await moveBucket(trx, bucket.id, opts.amountMicro);
      await repayDebt(trx, { workspaceId: opts.workspaceId, fromBucketId: bucket.id, idempotencyKey: opts.idempotencyKey });
    }
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
            coalesce(sum(balance_micro) filter (where kind = 'topup'), 0)::bigint as topup,
            coalesce(sum(balance_micro) filter (where kind = 'debt'), 0)::bigint as debt
       from credit_buckets where workspace_id = ? and (expires_at is null or expires_at > now())`,
    [workspaceId],
  );
  const plan = Number(rows[0].plan);
  const topup = Number(rows[0].topup);
  const debt = -Number(rows[0].debt) || 0; // never -0
  return { totalMicro: plan + topup - debt, planMicro: plan, topupMicro: topup, debtMicro: debt };
}

/**
 * Holds `amountMicro` for a request. Idempotent on `reservationId` (derived from the workflow), so an
 * activity retry returns the first outcome. Throws InsufficientCreditsError (402) when the spendable
 * balance cannot cover it and a 403 `key_cost_cap_exceeded` when the key's cap would be passed.
 * One database call (gateway_reserve, db/migrations/20261122220000_ledger_functions.ts).
 */
export async function reserve(db: Db, opts: { reservationId: string; workspaceId: string; apiKeyId?: string | null; amountMicro: number; requestId?: string; model?: string }): Promise<Reservation> {
  if (!Number.isSafeInteger(opts.amountMicro) || opts.amountMicro < 0) throw new RangeError('reservation must be a non-negative integer of micro-credits');
  try {
    const rows = await preparedRows<{ r: Record<string, any> }>(db, db.raw('select gateway_reserve(?, ?, ?, ?, ?, ?) as r', [
      opts.reservationId, opts.workspaceId, opts.apiKeyId ?? null, opts.amountMicro, opts.requestId ?? null, opts.model ?? null,
    ]));
    return toReservation(rows[0].r);
  } catch (err) {
    throw await ledgerError(db, err, opts);
  }
}

export interface SettleOutcome {
  /** What was charged: always the asked amount. */
  chargedMicro: number;
  /** Part of the charge no balance covered, now owed as the workspace's debt. */
  debtMicro: number;
  /** The reservation was settled before: this call changed nothing (its first outcome is returned). */
  repeated: boolean;
}

/**
 * Charges the exact cost and lets go of the hold, in one transaction (and records the request's usage
 * with it when given); what the balance cannot cover becomes debt. Idempotent: settling a reservation that
 * is no longer held returns its recorded outcome.
 */
export async function settle(db: Db, opts: { reservationId: string; chargeMicro: number; model?: string; usage?: UsageRecord }): Promise<SettleOutcome> {
  if (!Number.isSafeInteger(opts.chargeMicro) || opts.chargeMicro < 0) throw new RangeError('charge must be a non-negative integer of micro-credits');
  const rows = await preparedRows<{ r: Record<string, any> }>(db, db.raw('select gateway_settle(?, ?, ?, ?::jsonb) as r', [
    opts.reservationId, opts.chargeMicro, opts.model ?? null, opts.usage === undefined ? null : usageRecordJson(opts.usage),
  ]));
  return { chargedMicro: Number(rows[0].r.chargedMicro), debtMicro: Number(rows[0].r.debtMicro), repeated: rows[0].r.repeated === true };
}

/**
 * Gives the whole hold back (the request failed or was refused), recording its usage when given. Idempotent;
 * a hold that was never taken is nothing to give back (null).
 */
export async function refund(db: Db, opts: { reservationId: string; reason: string; usage?: UsageRecord }): Promise<Reservation | null> {
  const { rows } = await db.raw('select gateway_refund(?, ?, ?::jsonb) as r', [
    opts.reservationId, opts.reason, opts.usage === undefined ? null : usageRecordJson(opts.usage),
  ]);
  return rows[0].r === null ? null : toReservation(rows[0].r);
}

/**
 * The ledger function's refusals as typed errors. A cost cap's refusal carries the cap (its detail); where
 * the key stands under it is read after the refusal, for the message only.
 */
async function ledgerError(db: Db, err: unknown, opts: { apiKeyId?: string | null; amountMicro: number }): Promise<unknown> {
  const pg = err as { code?: string; detail?: string };
  if (pg.code === 'GW402') return new InsufficientCreditsError();
  if (pg.code === 'GW403') {
    // Not inside a caller's transaction: the refusal has aborted it.
    const key = opts.apiKeyId && !(db as Knex.Transaction).isTransaction ? await db('api_keys').where({ id: opts.apiKeyId }).first('spent_micro', 'reserved_micro') : undefined;
    return costCapExceeded({
      capMicro: Number(pg.detail ?? 0), spentMicro: key ? Number(key.spent_micro) : null, reservedMicro: key ? Number(key.reserved_micro) : null, holdMicro: opts.amountMicro,
    });
  }
  return err;
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
  // Rows come from knex (bigint parsed) or from to_jsonb (numbers); both map the same way.
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    apiKeyId: row.api_key_id,
    requestId: row.request_id ?? null,
    amountMicro: Number(row.amount_micro),
    status: row.status,
    allocations: typeof row.allocations === 'string' ? JSON.parse(row.allocations) : row.allocations,
    chargedMicro: row.charged_micro === null ? null : Number(row.charged_micro),
  };
}
