/** The monthly grant's batch activity: one keyset page of workspaces on a plan, each granted once per cycle. */
import { Context } from '@temporalio/activity';
import { grantCycleBatch } from '../domain/plan-grants';
import type { ActivityDeps } from './deps';

export interface GrantBatchInput {
  cycle: string;
  /** Keyset cursor: the last workspace id of the previous batch (null for the first). */
  after: string | null;
  limit: number;
}

export interface GrantBatchResult {
  processed: number;
  granted: number;
  grantedMicro: number;
  rolledOverMicro: number;
  expiredMicro: number;
  nextAfter: string | null;
}

export function createBillingActivities(deps: Pick<ActivityDeps, 'db'>) {
  return {
    async grantPlanCreditsBatch(input: GrantBatchInput): Promise<GrantBatchResult> {
      const batch = await grantCycleBatch(deps.db, { ...input, onProgress: () => Context.current().heartbeat() });
      const sum = (pick: (o: (typeof batch.outcomes)[number]) => number) => batch.outcomes.reduce((n, o) => n + pick(o), 0);
      return {
        processed: batch.outcomes.length,
        granted: batch.outcomes.filter((o) => o.granted).length,
        grantedMicro: sum((o) => o.grantedMicro),
        rolledOverMicro: sum((o) => o.rolledOverMicro),
        expiredMicro: sum((o) => o.expiredMicro),
        nextAfter: batch.nextAfter,
      };
    },
  };
}
