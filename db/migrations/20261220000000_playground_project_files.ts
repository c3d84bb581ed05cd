/**
 * Projects get their own files and a pin. A Playground file belongs to exactly one chat or one project:
 * a project's files are offered to every chat in it and readable by whoever can read one of its chats.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_files', (t) => {
    t.text('project_id').references('playground_projects.id').onDelete('CASCADE');
    t.index(['project_id']);
  });
  await knex.raw('alter table playground_files alter column chat_id drop not null');
  await knex.raw('alter table playground_files add constraint playground_files_owner_check check ((chat_id is null) <> (project_id is null))');
  await knex.raw('create index playground_files_workspace_idx on playground_files (workspace_id)');
  await knex.schema.alterTable('playground_projects', (t) => {
    t.timestamp('pinned_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_projects', (t) => t.dropColumn('pinned_at'));
  await knex('playground_files').whereNotNull('project_id').delete();
  await knex.raw('drop index if exists playground_files_workspace_idx');
  await knex.raw('alter table playground_files drop constraint playground_files_owner_check');
  await knex.raw('alter table playground_files alter column chat_id set not null');
  await knex.schema.alterTable('playground_files', (t) => t.dropColumn('project_id'));
}
