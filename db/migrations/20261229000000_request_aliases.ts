/**
 * Names a request answers to besides its own x-request-id, recorded before anything is held or called: the
 * client's own X-Request-Id, and the x-request-id of an Idempotency-Key replay (which names the run it joined).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('request_aliases', (t) => {
    t.bigIncrements('id');
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('alias').notNullable();
    /** Our x-request-id of the request the alias names (a client's X-Request-Id). */
    t.text('request_id');
    /** The run the alias names (a replay joins a run that has another request's id). */
    t.text('workflow_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'alias']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('request_aliases');
}
