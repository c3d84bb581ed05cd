/** A workspace's credits as its billing admins see them: balance by source, plan, and the cycle's spend. */
import type { Knex } from 'knex';
import { cycleSpendMicro } from './budget-evaluation';
import { getBalance } from './ledger';
import { microToCredits } from '../core/money';
import { planOfWorkspace } from './plans';

export async function billingSummary(db: Knex, opts: { workspaceId: string; cycle: string }) {
  const [balance, plan, spendMicro] = await Promise.all([
    getBalance(db, opts.workspaceId), planOfWorkspace(db, opts.workspaceId), cycleSpendMicro(db, opts.workspaceId, opts.cycle),
  ]);
  return {
    object: 'billing.balance' as const,
    workspace_id: opts.workspaceId,
    cycle: opts.cycle,
    balance: microToCredits(balance.totalMicro),
    plan_credits: microToCredits(balance.planMicro),
    topup_credits: microToCredits(balance.topupMicro),
    /** Charges no balance covered; the next grant or topup pays them first. */
    debt: microToCredits(balance.debtMicro),
    spent_this_cycle: microToCredits(spendMicro),
    plan: plan && {
      id: plan.id,
      name: plan.name,
      monthly_credits: microToCredits(plan.monthlyCreditsMicro),
      rollover: plan.rollover,
      rollover_cap: plan.rolloverCapMicro === null ? null : microToCredits(plan.rolloverCapMicro),
    },
  };
}

/**
 * The latest credit movements a person reads on the billing page. Holds and their releases are internal
 * bookkeeping of a request (the settle row is its charge), so they are left out.
 */
export async function ledgerEntries(db: Knex, workspaceId: string, limit = 100) {
  const rows = await db('credit_ledger as l').leftJoin('credit_buckets as b', 'b.id', 'l.bucket_id')
    .where('l.workspace_id', workspaceId).whereNotIn('l.kind', ['reserve', 'release'])
    .orderBy('l.id', 'desc').limit(limit)
    .select('l.id', 'l.kind', 'l.amount_micro', 'l.model', 'l.api_key_id', 'l.request_id', 'l.created_at', 'b.kind as source');
  return rows.map((r) => ({
    object: 'billing.ledger_entry' as const,
    id: Number(r.id),
    kind: r.kind as string,
    credits: microToCredits(Number(r.amount_micro)),
    source: (r.source ?? null) as 'plan' | 'topup' | null,
    model: r.model as string | null,
    api_key_id: r.api_key_id as string | null,
    request_id: r.request_id as string | null,
    created_at: Math.floor(new Date(r.created_at).getTime() / 1000),
  }));
}
