/**
 * Delivers one budget alert on one channel. The activity retries with backoff, so an alert whose SMTP
 * server or webhook is down for a while goes out once it is back (every attempt carries the same delivery
 * id, and none follows one recorded as sent: domain/alert-delivery.ts); after `giveUpAfterMs` (24 hours unless the worker is configured otherwise) the delivery
 * is given up and recorded as failed, so a dead target is not retried without end and the alert shows it.
 */
import { ActivityFailure, patched, proxyActivities } from '@temporalio/workflow';
import type { GatewayActivities } from '../activities';
import type { DeliveryOutcome } from '../domain/alert-delivery';
import type { DueDelivery } from '../domain/budget-evaluation';

export const DEFAULT_DELIVERY_GIVE_UP_MS = 24 * 3600_000;

const bookkeeping = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** The delivery's activity heartbeats: a worker that died mid-send is retried within seconds, not minutes. */
const DELIVERY_HEARTBEATS = 'alert-delivery-heartbeats';

export async function budgetAlertDeliveryWorkflow(delivery: DueDelivery): Promise<DeliveryOutcome> {
  const channels = proxyActivities<GatewayActivities>({
    // Bounds one attempt (SMTP and webhook calls carry their own shorter timeouts) and, with retries, all of them.
    startToCloseTimeout: '2 minutes',
    ...(patched(DELIVERY_HEARTBEATS) ? { heartbeatTimeout: '10 seconds' } : {}),
    scheduleToCloseTimeout: delivery.giveUpAfterMs ?? DEFAULT_DELIVERY_GIVE_UP_MS,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '3 minutes' },
  });
  try {
    return await channels.deliverBudgetAlert(delivery);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    await bookkeeping.recordGivenUpBudgetAlertDelivery({ delivery, reason: givenUpReason(delivery, err) });
    return 'given_up';
  }
}

/**
 * What the alert's owner is told: a webhook's last failure (about their own URL), but nothing of the
 * gateway's mail server.
 */
function givenUpReason(delivery: DueDelivery, failure: ActivityFailure): string {
  const window = `Given up after retrying for ${duration(delivery.giveUpAfterMs ?? DEFAULT_DELIVERY_GIVE_UP_MS)}`;
  if (delivery.channel === 'email') return `${window}: the e-mail could not be handed to the mail server.`;
  return `${window}; last failure: ${lastFailure(failure).replace(/^webhook /, '')}`;
}

/** The innermost failure's message: a timeout of the whole window wraps the last attempt's failure. */
function lastFailure(failure: ActivityFailure): string {
  let message = 'no answer';
  for (let cause: Error | undefined = failure.cause; cause; cause = (cause as { cause?: Error }).cause) message = cause.message || message;
  return message;
}

function duration(ms: number): string {
  if (ms >= 3600_000) return `${Math.round((ms / 3600_000) * 10) / 10} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1000)} s`;
}
