/**
 * One automatic top-up workflow per workspace (id `auto-topup-<workspaceId>`), started or poked by
 * signal-with-start after a settlement left the balance below the threshold, and by a webhook when a
 * top-up's payment failed. It charges through one activity at a time (signals arriving meanwhile collapse
 * into one more check), and the activity charges at most once per period whatever it is asked, so a
 * crossing is never charged twice. A failure is e-mailed to the workspace's owners and billing members.
 * Idle for a while, it ends; the next signal starts it again. It continues as new when its history grows.
 */
import { allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { GatewayActivities } from '../activities';
import { AUTO_TOPUP_STATUS_QUERY, BALANCE_LOW_SIGNAL, PAYMENT_FAILED_SIGNAL, type PaymentFailed } from './contracts';

const payments = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

const IDLE_TIMEOUT = '1 hour';
const MAX_HISTORY_EVENTS = 5_000;

export const balanceLowSignal = defineSignal(BALANCE_LOW_SIGNAL);
export const paymentFailedSignal = defineSignal<[PaymentFailed]>(PAYMENT_FAILED_SIGNAL);

export interface AutoTopUpStatus {
  /** Checks run (each one charges at most once per period). */
  checks: number;
  charged: number;
  failuresNotified: number;
  busy: boolean;
}
export const autoTopUpStatusQuery = defineQuery<AutoTopUpStatus>(AUTO_TOPUP_STATUS_QUERY);

export interface AutoTopUpInput {
  workspaceId: string;
  /** Carried across continue-as-new. */
  pendingCheck?: boolean;
  failedPayments?: string[];
}

export async function autoTopUpWorkflow(input: AutoTopUpInput): Promise<AutoTopUpStatus> {
  let pendingCheck = input.pendingCheck ?? false;
  const failed = new Set(input.failedPayments ?? []);
  const status: AutoTopUpStatus = { checks: 0, charged: 0, failuresNotified: 0, busy: false };
  setHandler(balanceLowSignal, () => { pendingCheck = true; });
  setHandler(paymentFailedSignal, ({ paymentId }) => { failed.add(paymentId); });
  setHandler(autoTopUpStatusQuery, () => status);

  for (;;) {
    if (!(await condition(() => pendingCheck || failed.size > 0, IDLE_TIMEOUT))) return status;
    status.busy = true;
    if (pendingCheck) {
      pendingCheck = false;
      const result = await payments.runAutoTopUp({ workspaceId: input.workspaceId });
      status.checks++;
      if (result.outcome === 'charged') status.charged++;
      if (result.outcome === 'failed') failed.add(result.paymentId);
    }
    for (const paymentId of [...failed]) {
      await payments.notifyAutoTopUpFailure({ paymentId });
      failed.delete(paymentId);
      status.failuresNotified++;
    }
    status.busy = false;
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > MAX_HISTORY_EVENTS) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof autoTopUpWorkflow>({ workspaceId: input.workspaceId, pendingCheck, failedPayments: [...failed] });
    }
  }
}
