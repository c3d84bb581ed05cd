/**
 * The receipt of a Playground message, from the same records an API call leaves: its usage record (tokens
 * or units, the model that served, fallback depth, latency) and its ledger rows (held, settled, released).
 * The credits are what the ledger settled, so a receipt never disagrees with the balance.
 */
import type { Knex } from 'knex';
import { microToCredits } from '../core/money';

export interface Receipt {
  requestId: string;
  status: string;
  endpoint: string;
  modelRequested: string;
  modelUsed: string | null;
  fallbackDepth: number;
  /** The deployment that served (a model with several); null: the model's implicit one. */
  deployment: string | null;
  inputTokens: number;
  outputTokens: number;
  units: unknown;
  latencyMs: number | null;
  /** Whose provider key served: the workspace's own ("your key", charged the BYOK fee) or the platform's. */
  keySource: 'platform' | 'workspace';
  creditsMicro: number;
  credits: number;
  ledger: Array<{ kind: string; amountMicro: number; model: string | null; at: number }>;
}

export async function receiptsFor(db: Knex, workspaceId: string, requestIds: string[]): Promise<Map<string, Receipt>> {
  const out = new Map<string, Receipt>();
  if (requestIds.length === 0) return out;
  const [usage, ledger] = await Promise.all([
    db('usage_records').where({ workspace_id: workspaceId }).whereIn('request_id', requestIds),
    db('credit_ledger').where({ workspace_id: workspaceId }).whereIn('request_id', requestIds).orderBy('id'),
  ]);
  for (const u of usage) {
    const rows = ledger.filter((l: any) => l.request_id === u.request_id);
    const settled = -rows.filter((l: any) => l.kind === 'settle').reduce((sum: number, l: any) => sum + Number(l.amount_micro), 0);
    out.set(u.request_id, {
      requestId: u.request_id, status: u.status, endpoint: u.endpoint, modelRequested: u.model_requested, modelUsed: u.model_used,
      fallbackDepth: u.fallback_depth, deployment: u.deployment ?? null, inputTokens: Number(u.input_tokens), outputTokens: Number(u.output_tokens), units: u.units, latencyMs: u.latency_ms,
      keySource: u.key_source === 'workspace' ? 'workspace' : 'platform', creditsMicro: settled, credits: microToCredits(settled),
      ledger: rows.map((l: any) => ({ kind: l.kind, amountMicro: Number(l.amount_micro), model: l.model, at: Math.floor(new Date(l.created_at).getTime() / 1000) })),
    });
  }
  return out;
}

/** What a chat has cost so far: the settled credits of all its messages' requests. */
export async function chatTotalMicro(db: Knex, workspaceId: string, chatId: string): Promise<number> {
  const row = await db('credit_ledger as l')
    .join('playground_messages as m', 'm.request_id', 'l.request_id')
    .where({ 'm.chat_id': chatId, 'l.workspace_id': workspaceId, 'l.kind': 'settle' })
    .sum({ total: 'l.amount_micro' })
    .first();
  return -Number(row?.total ?? 0);
}
