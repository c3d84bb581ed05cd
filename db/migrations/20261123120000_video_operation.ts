/**
 * A video job keeps the provider's operation id (and the hop it belongs to) the moment the provider accepted
 * the submission: a submission retried after a crash finds it and never asks the provider for a second job.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('video_jobs', (t) => {
    t.text('operation_id');
    t.integer('operation_hop');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('video_jobs', (t) => {
    t.dropColumn('operation_id');
    t.dropColumn('operation_hop');
  });
}
