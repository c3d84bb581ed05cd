/**
 * Batches served on a provider's own batch API (docs/batches.md, "Provider batches"): the provider, the
 * model and the provider's batch id, kept once the batch is submitted so that a retried step finds it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('batches', (t) => {
    t.jsonb('native');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('batches', (t) => {
    t.dropColumn('native');
  });
}
