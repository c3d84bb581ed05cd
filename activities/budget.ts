/**
 * Budget alert activities: poke the workspace's watcher after a settlement (cheap when it has no alerts),
 * decide which alerts are due, and deliver one alert on one channel.
 */
import { heartbeating } from './heartbeat';
import { activityInfo, Context } from '@temporalio/activity';
import { cycleOf } from '../domain/billing-cycle';
import { alertPresence } from '../domain/budget-alerts';
import { dueAlertDeliveries, type DueDelivery } from '../domain/budget-evaluation';
import { deliverBudgetAlert, recordGivenUpDelivery, type DeliveryOutcome } from '../domain/alert-delivery';
import { WorkspaceIdKey } from '../workflows/contracts';
import { budgetWatcherId, SPEND_CHANGED_SIGNAL, type SpendChanged } from '../workflows/contracts';
import type { ActivityDeps } from './deps';
import { signalBudgetWatcher } from './budget-signal';

export function createBudgetActivities(deps: ActivityDeps) {
  const clock = deps.clock ?? (() => new Date());
  const email = { smtpUrl: deps.notifications?.smtpUrl ?? null, from: deps.notifications?.emailFrom ?? 'Model Gateway <alerts@localhost>' };
  return {
    /** Signal-with-start of the workspace's watcher; free for a workspace without alerts. */
    async notifyBudgetWatcher(input: { workspaceId: string }): Promise<{ signalled: boolean }> {
      return signalBudgetWatcher(deps, input.workspaceId);
    },

    async evaluateBudgetAlerts(input: { workspaceId: string; cycle: string }): Promise<{ spendMicro: number; due: DueDelivery[] }> {
      const { spendMicro, due } = await dueAlertDeliveries(deps.db, input);
      const giveUpAfterMs = deps.notifications?.deliveryGiveUpMs;
      return { spendMicro, due: giveUpAfterMs ? due.map((d) => ({ ...d, giveUpAfterMs })) : due };
    },

    /** Throws on a failed send (SMTP down, webhook non-2xx): the retry policy tries again. */
    async deliverBudgetAlert(input: DueDelivery): Promise<DeliveryOutcome> {
      // Heartbeats: a worker that dies mid-send is noticed in seconds, and the retry sends with the same delivery id.
      return heartbeating(() => deliverBudgetAlert(deps.db, input, email, { allowPrivateAddresses: deps.notifications?.allowPrivateWebhooks ?? false }));
    },

    /** The delivery's retries ran out of time: the alert shows it as failed. */
    async recordGivenUpBudgetAlertDelivery(input: { delivery: DueDelivery; reason: string }): Promise<void> {
      await recordGivenUpDelivery(deps.db, input.delivery, input.reason);
    },
  };
}
