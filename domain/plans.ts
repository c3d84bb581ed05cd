/** Subscription plans (seeded from db/seeds/plans.ts) and the plan a workspace is on. */
import type { Knex } from 'knex';
import { audit } from './audit';
import { NotFoundError } from '../core/errors';
import { getWorkspace } from './workspaces';

export interface Plan {
  id: string;
  name: string;
  monthlyCreditsMicro: number;
  rpmPreset: number;
  dailyTokenCap: number | null;
  storageLimitBytes: number;
  rollover: boolean;
  /** Most plan credits one cycle may carry into the next (null with rollover: no cap). */
  rolloverCapMicro: number | null;
}

export function toPlan(row: Record<string, any>): Plan {
  return {
    id: row.id,
    name: row.name,
    monthlyCreditsMicro: Number(row.monthly_credits_micro),
    rpmPreset: Number(row.rpm_preset),
    dailyTokenCap: row.daily_token_cap === null ? null : Number(row.daily_token_cap),
    storageLimitBytes: Number(row.storage_limit_bytes),
    rollover: Boolean(row.rollover),
    rolloverCapMicro: row.rollover_cap_micro === null ? null : Number(row.rollover_cap_micro),
  };
}

export async function listPlans(db: Knex): Promise<Plan[]> {
  const rows = await db('plans').orderBy('monthly_credits_micro');
  return rows.map(toPlan);
}

export async function getPlan(db: Knex | Knex.Transaction, id: string): Promise<Plan> {
  const row = await db('plans').where({ id }).first();
  if (!row) throw new NotFoundError(`No plan '${id}'`, { code: 'plan_not_found', param: 'plan' });
  return toPlan(row);
}

/** The workspace's plan, or null when it has none. */
export async function planOfWorkspace(db: Knex | Knex.Transaction, workspaceId: string): Promise<Plan | null> {
  const row = await db('plans as p').join('workspaces as w', 'w.plan_id', 'p.id').where('w.id', workspaceId).first('p.*');
  return row ? toPlan(row) : null;
}

/**
 * Moves a workspace to another plan (or to none). The new plan's credits arrive with the next monthly
 * grant (or an on-demand run of the current cycle, if that cycle was not granted yet).
 */
export async function setWorkspacePlan(db: Knex, opts: { workspaceId: string; planId: string | null; actor: string }): Promise<{ workspaceId: string; planId: string | null; previousPlanId: string | null }> {
  const workspace = await getWorkspace(db, opts.workspaceId);
  if (opts.planId !== null) await getPlan(db, opts.planId);
  await db.transaction(async (trx) => {
    await trx('workspaces').where({ id: opts.workspaceId }).update({ plan_id: opts.planId, updated_at: trx.fn.now() });
    await audit(trx, {
      workspaceId: opts.workspaceId, actor: opts.actor, action: 'workspace.set_plan', subjectType: 'workspace', subjectId: opts.workspaceId,
      data: { from: workspace.planId, to: opts.planId },
    });
  });
  return { workspaceId: opts.workspaceId, planId: opts.planId, previousPlanId: workspace.planId };
}
