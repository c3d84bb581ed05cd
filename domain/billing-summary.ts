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
