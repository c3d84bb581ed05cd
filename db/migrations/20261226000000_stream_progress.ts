/**
 * How far a stream served as a local activity got, at most a second old: what its request is billed if the
 * process writing it dies before the stream ends (a stream run as an ordinary activity reports the same in
 * its heartbeats). One row per hop's reservation, written only by streams longer than a second, deleted
 * once the stream settled.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('stream_progress', (t) => {
    t.text('reservation_id').primary();
    t.integer('input_tokens').notNullable();
    t.integer('output_chars').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('stream_progress');
}
