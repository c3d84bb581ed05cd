/**
 * Delivers one budget alert on one channel, at most once per (alert, cycle, channel).
 *
 * The delivery row is inserted first, the message is sent, and only then does the transaction commit: a
 * failed send rolls the row back (so the retry sends), and a second delivery of the same alert waits on the
 * row's unique key until the first commits, then finds it sent. The channel's target is read at send
 * time, so a corrected address or URL is used by the next retry, and a deleted alert stops retrying.
 * When the retries run out of time, the delivery is recorded as `failed` (recordGivenUpDelivery): the
 * alert shows it, and the watcher does not start it again in that cycle.
 */
import type { Knex } from 'knex';
import { postChatMessage, type WebhookOptions } from '../infra/notify/chat-webhook';
import { sendEmail, type EmailSettings } from '../infra/notify/email';
import { alertChatMessage, alertEmail } from './alert-messages';
import { toBudgetAlert } from './budget-alerts';
import type { DueDelivery } from './budget-evaluation';

export type DeliveryOutcome = 'sent' | 'already_sent' | 'alert_removed' | 'channel_removed' | 'given_up';

export async function deliverBudgetAlert(db: Knex, delivery: DueDelivery, email: EmailSettings, webhook: WebhookOptions = {}): Promise<DeliveryOutcome> {
  return db.transaction(async (trx) => {
    const row = await trx('budget_alerts').where({ id: delivery.alertId }).first();
    if (!row) return 'alert_removed';
    const { channels } = toBudgetAlert(row);
    if (!channels[delivery.channel]) return 'channel_removed';
    const { rows } = await trx.raw(
      `insert into budget_alert_deliveries (alert_id, cycle, channel, payload) values (?, ?, ?, ?)
       on conflict (alert_id, cycle, channel) do nothing returning id`,
      [delivery.alertId, delivery.cycle, delivery.channel, JSON.stringify(delivery.payload)],
    );
    if (rows.length === 0) return 'already_sent';
    if (delivery.channel === 'email') await sendEmail(email, alertEmail(delivery.payload, channels.email!.to));
    else await postChatMessage(channels.webhook!.url, alertChatMessage(delivery.payload), webhook);
    return 'sent';
  });
}

/** Records a delivery whose retries ran out of time as `failed`, with why (nothing when the alert is gone). */
export async function recordGivenUpDelivery(db: Knex, delivery: DueDelivery, reason: string): Promise<void> {
  await db.raw(
    `insert into budget_alert_deliveries (alert_id, cycle, channel, payload, status, error)
     select ?, ?, ?, ?, 'failed', ? where exists (select 1 from budget_alerts where id = ?)
     on conflict (alert_id, cycle, channel) do nothing`,
    [delivery.alertId, delivery.cycle, delivery.channel, JSON.stringify(delivery.payload), reason.slice(0, 500), delivery.alertId],
  );
}
