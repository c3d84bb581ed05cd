/**
 * A budget alert delivery is recorded `sending` before it is sent (then `sent`, or `failed` when given up):
 * a retry after a crash mid-send sends again with the same delivery id instead of a second, unknown message.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table budget_alert_deliveries drop constraint budget_alert_deliveries_status_check');
  await knex.raw(`alter table budget_alert_deliveries add constraint budget_alert_deliveries_status_check check (status in ('sending','sent','failed'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update budget_alert_deliveries set status = 'sent' where status = 'sending'`);
  await knex.raw('alter table budget_alert_deliveries drop constraint budget_alert_deliveries_status_check');
  await knex.raw(`alter table budget_alert_deliveries add constraint budget_alert_deliveries_status_check check (status in ('sent','failed'))`);
}
