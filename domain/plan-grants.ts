/**
 * The monthly plan grant of one billing cycle, per workspace, in one transaction:
 *  - grant the plan's monthly credits into the cycle's plan bucket (once: the key names workspace and cycle);
 *  - carry the previous cycle's unused plan credits over, up to the plan's cap, when the plan rolls over;
 *  - expire whatever earlier plan buckets still hold.
 * Topup buckets are never touched: topups never expire. Every step is idempotent, so a rerun of a cycle
 * (a retried activity, a second on-demand run) changes nothing.
 */
import type { Knex } from 'knex';
import { cycleEnd, parseCycle, previousCycle } from './billing-cycle';
import { expireBucket, grantPlanCredits, rollOverBucket } from './ledger';
import { toPlan, type Plan } from './plans';

export interface WorkspaceGrantOutcome {
  workspaceId: string;
  planId: string;
  /** False when this cycle's grant had already happened. */
  granted: boolean;
  grantedMicro: number;
  rolledOverMicro: number;
  expiredMicro: number;
}

export interface GrantBatchOutcome {
  cycle: string;
  outcomes: WorkspaceGrantOutcome[];
  /** Keyset cursor for the next batch; null when this batch reached the end. */
  nextAfter: string | null;
}

export const grantKeys = {
  grant: (workspaceId: string, cycle: string) => `plan-grant:${workspaceId}:${cycle}`,
  rollover: (workspaceId: string, cycle: string) => `plan-rollover:${workspaceId}:${cycle}`,
  // The run's cycle is part of the key: a bucket that regains credits later (a hold released after its
  // expiry) is expired again by the next cycle's run.
  expire: (workspaceId: string, bucketCycle: string, runCycle: string) => `plan-expire:${workspaceId}:${bucketCycle}@${runCycle}`,
};

export async function grantCycleForWorkspace(db: Knex, opts: { workspaceId: string; plan: Plan; cycle: string }): Promise<WorkspaceGrantOutcome> {
  parseCycle(opts.cycle);
  const { workspaceId, plan, cycle } = opts;
  const expiresAt = cycleEnd(cycle);
  return db.transaction(async (trx) => {
    // One run at a time per workspace: concurrent runs of a cycle queue here and find their work done.
    await trx.raw('select id from workspaces where id = ? for update', [workspaceId]);
    const granted = await grantPlanCredits(trx, {
      workspaceId, cycle, amountMicro: plan.monthlyCreditsMicro, expiresAt, idempotencyKey: grantKeys.grant(workspaceId, cycle), meta: { cycle, plan: plan.id },
    });

    const earlier: Array<{ id: number; cycle: string; balance_micro: number }> = await trx('credit_buckets')
      .where({ workspace_id: workspaceId, kind: 'plan' })
      .andWhere('cycle', '<', cycle)
      .andWhere('balance_micro', '>', 0)
      .orderBy('cycle')
      .forUpdate()
      .select('id', 'cycle', 'balance_micro');
    let rolledOverMicro = 0;
    let expiredMicro = 0;
    for (const bucket of earlier) {
      let left = bucket.balance_micro;
      if (plan.rollover && bucket.cycle === previousCycle(cycle)) {
        const moved = await rollOverBucket(trx, {
          workspaceId, fromBucketId: bucket.id, toCycle: cycle, toExpiresAt: expiresAt, capMicro: plan.rolloverCapMicro,
          idempotencyKey: grantKeys.rollover(workspaceId, cycle), meta: { from: bucket.cycle, to: cycle, plan: plan.id },
        });
        rolledOverMicro += moved;
        left -= moved;
      }
      if (left === 0) continue;
      expiredMicro += await expireBucket(trx, {
        workspaceId, bucketId: bucket.id, idempotencyKey: grantKeys.expire(workspaceId, bucket.cycle, cycle), meta: { cycle: bucket.cycle, by: cycle },
      });
    }
    return { workspaceId, planId: plan.id, granted, grantedMicro: granted ? plan.monthlyCreditsMicro : 0, rolledOverMicro, expiredMicro };
  });
}

/**
 * One batch of the monthly run: the next `limit` active workspaces on a plan after `after` (keyset pagination by
 * id, so a batch costs the same at workspace 100,000 as at workspace 1). `onProgress` is called after each
 * workspace (the activity heartbeats there).
 */
export async function grantCycleBatch(db: Knex, opts: { cycle: string; after: string | null; limit: number; onProgress?: () => void }): Promise<GrantBatchOutcome> {
  parseCycle(opts.cycle);
  // A workspace still waiting for its owner's e-mail confirmation gets its credits when it comes (domain/members.ts).
  const query = db('workspaces as w').join('plans as p', 'p.id', 'w.plan_id').whereNotNull('w.activated_at').orderBy('w.id').limit(opts.limit).select('w.id as workspace_id', 'p.*');
  if (opts.after !== null) query.where('w.id', '>', opts.after);
  const rows = await query;
  const outcomes: WorkspaceGrantOutcome[] = [];
  for (const row of rows) {
    outcomes.push(await grantCycleForWorkspace(db, { workspaceId: row.workspace_id, plan: toPlan(row), cycle: opts.cycle }));
    opts.onProgress?.();
  }
  return { cycle: opts.cycle, outcomes, nextAfter: rows.length === opts.limit ? rows[rows.length - 1].workspace_id : null };
}
