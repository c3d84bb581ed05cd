/**
 * Closing a request's books in one transaction: the ledger settlement (or refund), the usage record and
 * the key's daily token count move together, so a crash can never leave one without the others. Both
 * operations are idempotent (the usage record is unique per request id).
 */
import type { Knex } from 'knex';
import { refund, settle } from './ledger';
import { usageRecordJson, type UsageRecord } from './usage-record';

export type { RequestStatus, UsageRecord } from './usage-record';

/** Charges `chargeMicro` against the reservation and records the usage, in one transaction. Idempotent. */
export async function settleRequest(db: Knex, opts: { reservationId: string; chargeMicro: number; usage: UsageRecord }): Promise<{ chargedMicro: number; uncoveredMicro: number }> {
  return settle(db, { reservationId: opts.reservationId, chargeMicro: opts.chargeMicro, model: opts.usage.modelUsed ?? undefined, usage: opts.usage });
}

/** Gives a failed request's hold back (if it had one) and records the failure, in one transaction. */
export async function failRequest(db: Knex, opts: { reservationId: string | null; reason: string; usage: UsageRecord }): Promise<void> {
  const usage = { ...opts.usage, inputTokens: 0, outputTokens: 0 };
  if (opts.reservationId) await refund(db, { reservationId: opts.reservationId, reason: opts.reason, usage });
  else await db.raw('select gateway_record_usage(?::jsonb, 0)', [usageRecordJson(usage)]);
}

/** Tokens a key used today (UTC), for its daily cap. */
export async function tokensUsedToday(db: Knex, apiKeyId: string): Promise<number> {
  const row = await db('key_daily_tokens').where({ api_key_id: apiKeyId }).andWhereRaw(`day = (now() at time zone 'utc')::date`).first('tokens');
  return row ? Number(row.tokens) : 0;
}
