/**
 * Delivers one budget alert on one channel. The activity retries with backoff and no attempt limit (the
 * interval tops out at a few minutes), so an alert whose SMTP server or webhook is down goes out once it
 * is back; the activity itself makes sure it goes out only once.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { GatewayActivities } from '../activities';
import type { DeliveryOutcome } from '../domain/alert-delivery';
import type { DueDelivery } from '../domain/budget-evaluation';

const channels = proxyActivities<GatewayActivities>({
  // Bounds one attempt (SMTP and webhook calls carry their own shorter timeouts).
  startToCloseTimeout: '2 minutes',
  // No maximumAttempts: unlimited.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '3 minutes' },
});

export async function budgetAlertDeliveryWorkflow(delivery: DueDelivery): Promise<DeliveryOutcome> {
  return channels.deliverBudgetAlert(delivery);
}
