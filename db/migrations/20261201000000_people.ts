/**
 * People: accounts, sessions (only token hashes stored), workspace members with roles, invitations,
 * one-time e-mail tokens (verification, password reset), used CAPTCHA challenges, and the member who owns
 * each API key (a key never has more power than its creator's current role).
 */
import type { Knex } from 'knex';

const ROLE_CHECK = `('owner','admin','developer','billing','viewer')`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.text('id').primary();
    t.text('email').notNullable();
    t.text('name').notNullable();
    t.text('password_hash').notNullable();
    t.timestamp('email_verified_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index users_email_unique on users (lower(email))');

  await knex.schema.createTable('sessions', (t) => {
    t.text('id').primary();
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('token_hash').notNullable().unique();
    t.text('workspace_id').references('workspaces.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['user_id']);
  });

  await knex.schema.createTable('members', (t) => {
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('role').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'user_id']);
    t.index(['user_id']);
  });
  await knex.raw(`alter table members add constraint members_role_check check (role in ${ROLE_CHECK})`);

  await knex.schema.createTable('invitations', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('role').notNullable();
    t.text('token_hash').notNullable().unique();
    t.text('invited_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('accepted_at', { useTz: true });
    t.text('accepted_by').references('users.id').onDelete('SET NULL');
    t.timestamp('revoked_at', { useTz: true });
    t.index(['workspace_id']);
  });
  await knex.raw(`alter table invitations add constraint invitations_role_check check (role in ${ROLE_CHECK})`);

  await knex.schema.createTable('user_tokens', (t) => {
    t.text('token_hash').primary();
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('purpose').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'purpose']);
  });
  await knex.raw(`alter table user_tokens add constraint user_tokens_purpose_check check (purpose in ('verify_email','reset_password'))`);

  await knex.schema.createTable('captcha_uses', (t) => {
    t.text('signature').primary();
    t.timestamp('expires_at', { useTz: true }).notNullable();
  });

  await knex.schema.createTable('contact_messages', (t) => {
    t.bigIncrements('id');
    t.text('email').notNullable();
    t.text('message').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.alterTable('api_keys', (t) => {
    /** `project`: model calls and workspace routes; `admin` (`sk-admin-`): the organization management API. */
    t.text('kind').notNullable().defaultTo('project');
    // No cascade: a key whose creator vanished must not fall back to working like an operator's key.
    t.text('created_by_user_id').references('users.id');
    t.text('preset');
  });
  await knex.raw(`alter table api_keys add constraint api_keys_kind_check check (kind in ('project','admin'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table api_keys drop constraint if exists api_keys_kind_check');
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropColumn('preset');
    t.dropColumn('created_by_user_id');
    t.dropColumn('kind');
  });
  for (const table of ['contact_messages', 'captcha_uses', 'user_tokens', 'invitations', 'members', 'sessions', 'users']) {
    await knex.schema.dropTableIfExists(table);
  }
}
