/** An archived Playground chat is hidden from the chat list (an "Archived" view lists them, to restore). */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_chats', (t) => {
    t.timestamp('archived_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_chats', (t) => t.dropColumn('archived_at'));
}
