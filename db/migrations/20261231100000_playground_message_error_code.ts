/** A failed Playground message keeps its error's code beside its text, so the app can link to the fix. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_messages', (t) => {
    t.text('error_code');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_messages', (t) => t.dropColumn('error_code'));
}
