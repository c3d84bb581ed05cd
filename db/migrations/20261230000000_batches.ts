/**
 * Batches (OpenAI's Batch API and Anthropic's Message Batches on one engine): the batch, and one row per
 * input line holding its body until it runs and its outcome once it ran (the output and error files are
 * written from these rows). Usage records name the batch and the line's `custom_id`, so the request log can
 * filter a batch's lines; gateway_record_usage reads the record's new `batchId` and `batchCustomId` fields
 * (domain/usage-record.ts names the same fields).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('batches', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('api_key_id');
    t.text('user_id');
    /** The key's limits when the batch was made: its lines keep to its rpm and its allowed models. */
    t.integer('rpm_limit');
    t.jsonb('allowed_models');
    /** Which API made it (`openai` or `anthropic`): the shape its object and results are shown in. */
    t.text('shape').notNullable();
    /** The endpoint every line calls, as its URL (`/v1/chat/completions`). */
    t.text('endpoint').notNullable();
    t.text('input_file_id');
    t.text('completion_window').notNullable();
    t.jsonb('metadata');
    t.text('status').notNullable();
    t.jsonb('errors');
    t.text('output_file_id');
    t.text('error_file_id');
    t.integer('total').notNullable().defaultTo(0);
    t.integer('completed').notNullable().defaultTo(0);
    t.integer('failed').notNullable().defaultTo(0);
    t.bigInteger('input_tokens').notNullable().defaultTo(0);
    t.bigInteger('output_tokens').notNullable().defaultTo(0);
    t.bigInteger('credits_micro').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('in_progress_at', { useTz: true });
    t.timestamp('finalizing_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('failed_at', { useTz: true });
    t.timestamp('expired_at', { useTz: true });
    t.timestamp('cancelling_at', { useTz: true });
    t.timestamp('cancelled_at', { useTz: true });
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw(`alter table batches add constraint batches_status_check check (status in
    ('validating','failed','in_progress','finalizing','completed','expired','cancelling','cancelled'))`);

  await knex.schema.createTable('batch_lines', (t) => {
    t.text('batch_id').notNullable().references('batches.id').onDelete('CASCADE');
    /** 0-based position in the input (errors name line `line_index + 1`). */
    t.integer('line_index').notNullable();
    t.text('custom_id').notNullable();
    t.text('model').notNullable();
    /** The request body; dropped once the line ran. */
    t.jsonb('body');
    /** pending -> running -> succeeded | errored; pending lines of a batch cancelled or expired end `cancelled` / `expired`. */
    t.text('status').notNullable().defaultTo('pending');
    t.text('workspace_id').notNullable();
    t.text('api_key_id');
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.text('request_id');
    t.integer('status_code');
    t.jsonb('response');
    t.jsonb('error');
    t.bigInteger('credits_micro').notNullable().defaultTo(0);
    t.bigInteger('input_tokens').notNullable().defaultTo(0);
    t.bigInteger('output_tokens').notNullable().defaultTo(0);
    t.primary(['batch_id', 'line_index']);
  });
  // What the claims count: a workspace's lines running now, and a key's lines started in the last minute.
  await knex.raw(`create index batch_lines_running on batch_lines (workspace_id) where status = 'running'`);
  await knex.raw(`create index batch_lines_key_started on batch_lines (api_key_id, started_at) where started_at is not null`);

  await knex.schema.alterTable('usage_records', (t) => {
    t.text('batch_id');
    t.text('batch_custom_id');
  });
  await knex.raw('create index usage_records_batch on usage_records (workspace_id, batch_id) where batch_id is not null');
  await knex.raw(recordUsage(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordUsage(false));
  await knex.schema.alterTable('usage_records', (t) => {
    t.dropColumn('batch_id');
    t.dropColumn('batch_custom_id');
  });
  await knex.schema.dropTableIfExists('batch_lines');
  await knex.schema.dropTableIfExists('batches');
}

function recordUsage(withBatch: boolean): string {
  return `
    create or replace function gateway_record_usage(p_usage jsonb, p_credits bigint)
    returns void language plpgsql as $$
    declare
      u record;
    begin
      select * into u from jsonb_to_record(p_usage) as x(
        "requestId" text, "workspaceId" text, "apiKeyId" text, endpoint text, "modelRequested" text, "modelUsed" text,
        "fallbackDepth" int, status text, "inputTokens" bigint, "outputTokens" bigint, units jsonb,
        "clientRequestId" text, "errorCode" text, "latencyMs" int, "userId" text${withBatch ? ', "batchId" text, "batchCustomId" text' : ''});
      insert into usage_records (request_id, workspace_id, api_key_id, endpoint, model_requested, model_used, fallback_depth, status,
                                 input_tokens, output_tokens, units, credits_micro, client_request_id, error_code, latency_ms, user_id${withBatch ? ', batch_id, batch_custom_id' : ''})
      values (u."requestId", u."workspaceId", u."apiKeyId", u.endpoint, u."modelRequested", u."modelUsed", coalesce(u."fallbackDepth", 0), u.status,
              coalesce(u."inputTokens", 0), coalesce(u."outputTokens", 0), u.units, p_credits, u."clientRequestId", u."errorCode", u."latencyMs", u."userId"${withBatch ? ', u."batchId", u."batchCustomId"' : ''})
      on conflict (request_id) do nothing;
      if found and u."apiKeyId" is not null and coalesce(u."inputTokens", 0) + coalesce(u."outputTokens", 0) > 0 then
        insert into key_daily_tokens (api_key_id, day, tokens)
        values (u."apiKeyId", (now() at time zone 'utc')::date, u."inputTokens" + u."outputTokens")
        on conflict (api_key_id, day) do update set tokens = key_daily_tokens.tokens + excluded.tokens;
      end if;
    end $$;
  `;
}
