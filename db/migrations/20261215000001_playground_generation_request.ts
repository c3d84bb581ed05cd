/**
 * A Playground generation keeps the request that made it (which endpoint, and the body as the member sent
 * it), so that regenerating an image, speech, video, music or a transcription sends the same request again.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_messages', (t) => {
    /** `{endpoint, body}` of a generation's assistant message; null for chat replies. */
    t.jsonb('generation');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('playground_messages', (t) => t.dropColumn('generation'));
}
