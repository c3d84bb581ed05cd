/**
 * Closing a request's books in one transaction: the ledger settlement (or refund), the usage record and
 * the key's daily token count move together, so a crash can never leave one without the others. Both
 * operations are idempotent (the usage record is unique per request id).
 */
import type { Knex } from 'knex';
import { refund, settle, type SettleOutcome } from './ledger';
import { usageRecordJson, type UsageRecord } from './usage-record';

export type { RequestStatus, UsageRecord } from './usage-record';

/**
 * Charges `chargeMicro` against the reservation and records the usage, in one transaction. Idempotent.
 * Every settlement passes here (plain requests, streams, image streams, video jobs): the first one of a
 * reservation is announced to the settlement listeners once it is committed.
 */
export async function settleRequest(db: Knex, opts: { reservationId: string; chargeMicro: number; usage: UsageRecord }): Promise<SettleOutcome> {
  const outcome = await settle(db, { reservationId: opts.reservationId, chargeMicro: opts.chargeMicro, model: opts.usage.modelUsed ?? undefined, usage: opts.usage });
  if (!outcome.repeated) {
    const settled: Settlement = { endpoint: opts.usage.endpoint, model: opts.usage.modelUsed, chargedMicro: outcome.chargedMicro };
    // Inside a caller's transaction the charge exists only once that commits (a rollback is retried, and counts then).
    if (db.isTransaction) (db as Knex.Transaction).executionPromise.then(() => announce(settled), () => undefined);
    else announce(settled);
  }
  return outcome;
}

/** A charge that was just settled (what operators' metrics count). */
export interface Settlement {
  endpoint: string;
  model: string | null;
  chargedMicro: number;
}

type SettlementListener = (settled: Settlement) => void;
/**
 * Per process, not per database handle: a process runs one gateway (tests that run several in one process
 * see each other's settlements).
 */
const listeners = new Set<SettlementListener>();

/** Calls `listener` after every first settlement of a reservation in this process; returns the unsubscribe. */
export function onSettlement(listener: SettlementListener): () => void {
  listeners.add(listener);
  return () => { listeners.delete(listener); };
}

function announce(settled: Settlement): void {
  for (const listener of listeners) {
    try {
      listener(settled);
    } catch {
      // A listener's failure never fails a settlement that is already committed.
    }
  }
}

/** Gives a failed request's hold back (if it had one) and records the failure, in one transaction. */
export async function failRequest(db: Knex, opts: { reservationId: string | null; reason: string; usage: UsageRecord }): Promise<void> {
  const usage = { ...opts.usage, inputTokens: 0, outputTokens: 0 };
  if (opts.reservationId) await refund(db, { reservationId: opts.reservationId, reason: opts.reason, usage });
  else await db.raw('select gateway_record_usage(?::jsonb, 0)', [usageRecordJson(usage)]);
}

/**
 * Today's row of a key's daily token count (UTC days, as `gateway_record_usage` writes them): a
 * condition on `key_daily_tokens` under `alias`, read with the key itself at authentication
 * (api/http/auth.ts), so the daily cap costs no round trip of its own.
 */
export function todaysTokensCondition(alias: string): string {
  return `${alias}.day = (now() at time zone 'utc')::date`;
}

/** A request's usage record as stored (what was charged for it, on which model). */
export interface StoredUsage {
  requestId: string;
  endpoint: string;
  modelRequested: string;
  modelUsed: string | null;
  fallbackDepth: number;
  /** The deployment that served (a model with several); null: the model's implicit one. */
  deployment: string | null;
  status: 'succeeded' | 'failed' | 'cancelled';
  creditsMicro: number;
  errorCode: string | null;
  createdAt: Date;
}

/** The workspace's usage record for a request, by our request id or the client's own `X-Request-Id`. */
export async function findUsage(db: Knex, workspaceId: string, id: string): Promise<StoredUsage | null> {
  const row = await db('usage_records').where({ workspace_id: workspaceId, request_id: id }).first()
    ?? await db('usage_records').where({ workspace_id: workspaceId, client_request_id: id }).orderBy('id', 'desc').first();
  if (!row) return null;
  return {
    requestId: row.request_id, endpoint: row.endpoint, modelRequested: row.model_requested, modelUsed: row.model_used,
    fallbackDepth: row.fallback_depth, deployment: row.deployment ?? null, status: row.status, creditsMicro: Number(row.credits_micro), errorCode: row.error_code,
    createdAt: new Date(row.created_at),
  };
}

/** A hop whose reservation was settled, as recorded: what it was charged and the usage record's status and tokens. */
export interface SettledHop {
  chargedMicro: number;
  status: 'succeeded' | 'failed' | 'cancelled';
  inputTokens: number;
  outputTokens: number;
}

/** The settlement of reservation `reservationId`, if it was settled (with its request's usage record). */
export async function findSettledHop(db: Knex, reservationId: string): Promise<SettledHop | null> {
  const row = await db('reservations as r').join('usage_records as u', 'u.request_id', 'r.request_id')
    .where({ 'r.id': reservationId, 'r.status': 'settled' })
    .first('r.charged_micro', 'u.status', 'u.input_tokens', 'u.output_tokens');
  if (!row) return null;
  return { chargedMicro: Number(row.charged_micro ?? 0), status: row.status, inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens) };
}
