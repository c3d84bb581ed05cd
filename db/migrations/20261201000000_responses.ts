/**
 * Stored Responses (`POST /v1/responses` with `store`, the default): the response object as answered, and
 * its items in order (this request's input items, then its output items), so a later request can continue
 * the conversation with `previous_response_id` or name an item with `item_reference`.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('responses', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    /** Not a foreign key: the previous response may be deleted, which ends the conversation there. */
    t.text('previous_response_id');
    t.text('model').notNullable();
    t.jsonb('response').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
  });

  await knex.schema.createTable('response_items', (t) => {
    t.text('response_id').notNullable().references('responses.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('workspace_id').notNullable();
    t.text('item_id').notNullable();
    t.text('kind').notNullable();
    t.jsonb('item').notNullable();
    t.primary(['response_id', 'position']);
    t.index(['workspace_id', 'item_id']);
  });
  await knex.raw(`alter table response_items add constraint response_items_kind_check check (kind in ('input','output'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('response_items');
  await knex.schema.dropTableIfExists('responses');
}
