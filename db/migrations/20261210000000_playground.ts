/**
 * The Playground: chats owned by the workspace (and started by a member), their messages (each assistant
 * message names the request that produced it, so its receipt comes from the ledger and usage records),
 * projects (folders of chats with instructions), shares with named members, bookmarks, and Playground files
 * (kept apart from API files, readable by exactly those who can read their chat).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('playground_projects', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('instructions').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'user_id']);
  });

  await knex.schema.createTable('playground_chats', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('project_id').references('playground_projects.id').onDelete('SET NULL');
    t.text('title').notNullable();
    t.text('model').notNullable();
    t.text('system_prompt').notNullable().defaultTo('');
    t.jsonb('params').notNullable().defaultTo('{}');
    /** `private`: the owner and named members; `workspace`: every member, at `workspace_access`. */
    t.text('visibility').notNullable().defaultTo('private');
    t.text('workspace_access').notNullable().defaultTo('read');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'updated_at']);
  });
  await knex.raw(`alter table playground_chats add constraint playground_chats_visibility_check check (visibility in ('private','workspace'))`);
  await knex.raw(`alter table playground_chats add constraint playground_chats_access_check check (workspace_access in ('read','continue'))`);

  await knex.schema.createTable('playground_shares', (t) => {
    t.text('chat_id').notNullable().references('playground_chats.id').onDelete('CASCADE');
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('access').notNullable();
    t.primary(['chat_id', 'user_id']);
  });
  await knex.raw(`alter table playground_shares add constraint playground_shares_access_check check (access in ('read','continue'))`);

  await knex.schema.createTable('playground_messages', (t) => {
    t.text('id').primary();
    t.text('chat_id').notNullable().references('playground_chats.id').onDelete('CASCADE');
    t.bigIncrements('position', { primaryKey: false });
    t.text('role').notNullable();
    /** `text` (chat), `image` (a generation: its files in `files`). */
    t.text('kind').notNullable().defaultTo('text');
    t.text('content').notNullable().defaultTo('');
    t.jsonb('files').notNullable().defaultTo('[]');
    t.text('model');
    t.text('request_id');
    /** `running`, `completed`, `stopped`, `failed` (assistant messages); `sent` (user messages). */
    t.text('status').notNullable();
    t.text('error');
    t.text('user_id').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['chat_id', 'position']);
    t.index(['request_id']);
  });

  await knex.schema.createTable('playground_bookmarks', (t) => {
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('chat_id').notNullable().references('playground_chats.id').onDelete('CASCADE');
    /** '' bookmarks (pins) the chat itself. */
    t.text('message_id').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'chat_id', 'message_id']);
  });

  await knex.schema.createTable('playground_files', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('chat_id').notNullable().references('playground_chats.id').onDelete('CASCADE');
    t.text('user_id').references('users.id').onDelete('SET NULL');
    t.text('filename').notNullable();
    t.text('content_type').notNullable();
    t.bigInteger('bytes').notNullable();
    t.text('storage_key').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['chat_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['playground_files', 'playground_bookmarks', 'playground_messages', 'playground_shares', 'playground_chats', 'playground_projects']) {
    await knex.schema.dropTableIfExists(table);
  }
}
