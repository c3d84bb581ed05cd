/**
 * Closing a request's books in one transaction: the ledger settlement (or refund), the usage record and
 * the key's daily token count move together, so a crash can never leave one without the others. Both
 * operations are idempotent (the usage record is unique per request id).
 */
import type { Knex } from 'knex';
import { refund, settle } from './ledger';

export type RequestStatus = 'succeeded' | 'failed' | 'cancelled';

export interface UsageRecord {
  requestId: string;
  workspaceId: string;
  apiKeyId: string | null;
  endpoint: string;
  modelRequested: string;
  modelUsed: string | null;
  fallbackDepth: number;
  status: RequestStatus;
  inputTokens: number;
  outputTokens: number;
  /** Non-token units: images, seconds of audio, characters. */
  units?: Record<string, number>;
  clientRequestId?: string | null;
  errorCode?: string | null;
  latencyMs?: number | null;
}

async function recordUsage(trx: Knex.Transaction, usage: UsageRecord, creditsMicro: number): Promise<void> {
  await trx.raw(
    `insert into usage_records (request_id, workspace_id, api_key_id, endpoint, model_requested, model_used, fallback_depth, status,
       input_tokens, output_tokens, units, credits_micro, client_request_id, error_code, latency_ms)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (request_id) do nothing`,
    [usage.requestId, usage.workspaceId, usage.apiKeyId, usage.endpoint, usage.modelRequested, usage.modelUsed, usage.fallbackDepth, usage.status,
      usage.inputTokens, usage.outputTokens, usage.units ? JSON.stringify(usage.units) : null, creditsMicro, usage.clientRequestId ?? null,
      usage.errorCode ?? null, usage.latencyMs ?? null],
  );
  const tokens = usage.inputTokens + usage.outputTokens;
  if (usage.apiKeyId && tokens > 0) {
    await trx.raw(
      `insert into key_daily_tokens (api_key_id, day, tokens) values (?, (now() at time zone 'utc')::date, ?)
       on conflict (api_key_id, day) do update set tokens = key_daily_tokens.tokens + excluded.tokens`,
      [usage.apiKeyId, tokens],
    );
  }
}

/** Charges `chargeMicro` against the reservation and records the usage. Returns what was charged. */
export async function settleRequest(db: Knex, opts: { reservationId: string; chargeMicro: number; usage: UsageRecord }): Promise<{ chargedMicro: number; uncoveredMicro: number }> {
  return db.transaction(async (trx) => {
    const already = await trx('usage_records').where({ request_id: opts.usage.requestId }).first('credits_micro');
    if (already) return { chargedMicro: Number(already.credits_micro), uncoveredMicro: 0 };
    const outcome = await settle(trx, { reservationId: opts.reservationId, chargeMicro: opts.chargeMicro, model: opts.usage.modelUsed ?? undefined });
    await recordUsage(trx, opts.usage, outcome.chargedMicro);
    return { chargedMicro: outcome.chargedMicro, uncoveredMicro: outcome.uncoveredMicro };
  });
}

/** Gives a failed request's hold back (if it had one) and records the failure. */
export async function failRequest(db: Knex, opts: { reservationId: string | null; reason: string; usage: UsageRecord }): Promise<void> {
  await db.transaction(async (trx) => {
    if (opts.reservationId) await refund(trx, { reservationId: opts.reservationId, reason: opts.reason });
    await recordUsage(trx, { ...opts.usage, inputTokens: 0, outputTokens: 0 }, 0);
  });
}

/** Tokens a key used today (UTC), for its daily cap. */
export async function tokensUsedToday(db: Knex, apiKeyId: string): Promise<number> {
  const row = await db('key_daily_tokens').where({ api_key_id: apiKeyId }).andWhereRaw(`day = (now() at time zone 'utc')::date`).first('tokens');
  return row ? Number(row.tokens) : 0;
}
