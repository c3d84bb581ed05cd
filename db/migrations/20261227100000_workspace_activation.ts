/**
 * A workspace made at sign-up may spend, and gets its plan's credits, only once the person who made it
 * confirmed their e-mail address: `activated_at` is null until then. Every other workspace (made by an
 * operator, the CLI, or a person already signed in) is active from the start, as are the existing ones.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.timestamp('activated_at', { useTz: true }).defaultTo(knex.fn.now());
  });
  await knex('workspaces').update({ activated_at: knex.ref('created_at') });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropColumn('activated_at');
  });
}
