/**
 * Playground chats become trees: regenerating a reply or editing a prompt adds a sibling (same parent)
 * instead of deleting what followed, so every branch keeps its messages and their receipts. A chat
 * remembers the branch on show by its last message (`current_message_id`); sending continues from there.
 * Existing chats become a single branch: each message's parent is the one before it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_messages', (t) => {
    /** The message this one follows (null: the chat's first turn); siblings share a parent. */
    t.text('parent_id').references('playground_messages.id').onDelete('CASCADE');
    t.index(['chat_id', 'parent_id']);
  });
  await knex.schema.alterTable('playground_chats', (t) => {
    t.text('current_message_id').references('playground_messages.id').onDelete('SET NULL');
  });
  await knex.raw(`
    update playground_messages m set parent_id = p.prev
    from (select id, lag(id) over (partition by chat_id order by position) as prev from playground_messages) p
    where p.id = m.id and p.prev is not null`);
  await knex.raw(`
    update playground_chats c set current_message_id = (
      select id from playground_messages m where m.chat_id = c.id order by position desc limit 1)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_chats', (t) => t.dropColumn('current_message_id'));
  await knex.schema.alterTable('playground_messages', (t) => t.dropColumn('parent_id'));
}
