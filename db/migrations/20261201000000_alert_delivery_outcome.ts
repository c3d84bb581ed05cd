/**
 * A budget alert delivery ends `sent`, or `failed` when its retries ran out of time (the channel kept
 * failing for the whole delivery window): the row then holds when it gave up and why, so the alert shows it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('budget_alert_deliveries', (t) => {
    t.text('status').notNullable().defaultTo('sent');
    t.text('error');
  });
  await knex.raw(`alter table budget_alert_deliveries add constraint budget_alert_deliveries_status_check check (status in ('sent','failed'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('budget_alert_deliveries', (t) => {
    t.dropChecks(['budget_alert_deliveries_status_check']);
    t.dropColumn('status');
    t.dropColumn('error');
  });
}
