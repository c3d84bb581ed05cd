/**
 * Delivers one budget alert on one channel: at least once, each time with the same delivery id, so a
 * receiver can drop a repeat.
 *
 * The delivery row is recorded (`sending`) and committed before anything is sent; the message then goes out
 * carrying the delivery's id (`X-Gateway-Delivery-Id` and `Idempotency-Key` on a webhook, the `Message-ID`
 * and `X-Gateway-Delivery-Id` of an e-mail) while the row is locked, and the row becomes `sent`. An attempt
 * that finds the row `sent` (or given up) sends nothing, and one running at the same time waits for the lock
 * and then finds it sent; one that finds it `sending` (the previous attempt's process died mid-send, or its
 * send failed) sends again, with the same id. The channel's target is read at send time, so a corrected
 * address or URL is used by the next retry, and a deleted alert stops retrying. When the retries run out of
 * time, the delivery is recorded as `failed` (recordGivenUpDelivery): the alert shows it, and the watcher
 * does not start it again in that cycle.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { postChatMessage, type WebhookOptions } from '../infra/notify/chat-webhook';
import { sendEmail, type EmailSettings } from '../infra/notify/email';
import { alertChatMessage, alertEmail } from './alert-messages';
import { toBudgetAlert } from './budget-alerts';
import type { DueDelivery } from './budget-evaluation';

export type DeliveryOutcome = 'sent' | 'already_sent' | 'alert_removed' | 'channel_removed' | 'given_up';

/** The delivery's id, the same on every attempt: one per alert, cycle and channel. */
export function alertDeliveryId(delivery: Pick<DueDelivery, 'alertId' | 'cycle' | 'channel'>): string {
  return `dlv_${createHash('sha256').update(`${delivery.alertId}\n${delivery.cycle}\n${delivery.channel}`).digest('hex').slice(0, 32)}`;
}

export async function deliverBudgetAlert(db: Knex, delivery: DueDelivery, email: EmailSettings, webhook: WebhookOptions = {}): Promise<DeliveryOutcome> {
  const recorded = await db.transaction(async (trx) => {
    const row = await trx('budget_alerts').where({ id: delivery.alertId }).first();
    if (!row) return 'alert_removed' as const;
    const { channels } = toBudgetAlert(row);
    if (!channels[delivery.channel]) return 'channel_removed' as const;
    await trx.raw(
      `insert into budget_alert_deliveries (alert_id, cycle, channel, payload, status) values (?, ?, ?, ?, 'sending')
       on conflict (alert_id, cycle, channel) do nothing`,
      [delivery.alertId, delivery.cycle, delivery.channel, JSON.stringify(delivery.payload)],
    );
    const existing = await trx('budget_alert_deliveries').where({ alert_id: delivery.alertId, cycle: delivery.cycle, channel: delivery.channel }).first('status');
    return existing.status === 'sending' ? channels : ('already_sent' as const);
  });
  if (typeof recorded === 'string') return recorded;
  const deliveryId = alertDeliveryId(delivery);
  // The row stays locked while sending: an attempt running at once waits, then finds it sent. A process that
  // dies mid-send lets go of the lock with its connection, and the retry sends again, with the same id.
  return db.transaction(async (trx) => {
    const row = await trx('budget_alert_deliveries').where({ alert_id: delivery.alertId, cycle: delivery.cycle, channel: delivery.channel }).forUpdate().first('status');
    if (row?.status !== 'sending') return 'already_sent';
    if (delivery.channel === 'email') await sendEmail(email, { ...alertEmail(delivery.payload, recorded.email!.to), deliveryId });
    else await postChatMessage(recorded.webhook!.url, alertChatMessage(delivery.payload), { ...webhook, deliveryId });
    await trx('budget_alert_deliveries').where({ alert_id: delivery.alertId, cycle: delivery.cycle, channel: delivery.channel })
      .update({ status: 'sent', delivered_at: trx.fn.now() });
    return 'sent';
  });
}

/** Records a delivery whose retries ran out of time as `failed`, with why (nothing when the alert is gone). */
export async function recordGivenUpDelivery(db: Knex, delivery: DueDelivery, reason: string): Promise<void> {
  await db.raw(
    `insert into budget_alert_deliveries (alert_id, cycle, channel, payload, status, error)
     select ?, ?, ?, ?, 'failed', ? where exists (select 1 from budget_alerts where id = ?)
     on conflict (alert_id, cycle, channel) do update set status = 'failed', error = excluded.error, delivered_at = now()
       where budget_alert_deliveries.status = 'sending'`,
    [delivery.alertId, delivery.cycle, delivery.channel, JSON.stringify(delivery.payload), reason.slice(0, 500), delivery.alertId],
  );
}
