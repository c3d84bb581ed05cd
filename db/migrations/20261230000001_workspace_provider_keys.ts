/**
 * Workspaces' own provider keys (bring your own key): one key per workspace and provider, sealed with the
 * BYOK key ring (AES-256-GCM; `key_id` names the ring's key that sealed it, so the ring can rotate), with
 * only its last four characters in the clear. `version` names one sealing: a replaced key is a new row, so
 * a provider instance cached for an old version is never used again.
 *
 * Usage records say whose key served (`key_source`: `platform` or `workspace`); gateway_record_usage reads
 * the record's new `keySource` field (domain/usage-record.ts names the same fields), beside the `deployment`
 * the previous migration added.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workspace_provider_keys', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    /** The ring key that sealed it. */
    t.text('key_id').notNullable();
    /** iv (12 bytes) | ciphertext | tag (16 bytes), with workspace and provider as additional data. */
    t.binary('sealed').notNullable();
    t.text('last_four').notNullable();
    t.text('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['workspace_id', 'provider']);
  });
  await knex.schema.alterTable('usage_records', (t) => {
    t.text('key_source').notNullable().defaultTo('platform');
  });
  await knex.raw(recordUsage(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordUsage(false));
  await knex.schema.alterTable('usage_records', (t) => t.dropColumn('key_source'));
  await knex.schema.dropTableIfExists('workspace_provider_keys');
}

function recordUsage(withKeySource: boolean): string {
  return `
    create or replace function gateway_record_usage(p_usage jsonb, p_credits bigint)
    returns void language plpgsql as $$
    declare
      u record;
    begin
      select * into u from jsonb_to_record(p_usage) as x(
        "requestId" text, "workspaceId" text, "apiKeyId" text, endpoint text, "modelRequested" text, "modelUsed" text,
        "fallbackDepth" int, status text, "inputTokens" bigint, "outputTokens" bigint, units jsonb,
        "clientRequestId" text, "errorCode" text, "latencyMs" int, "userId" text, deployment text${withKeySource ? ', "keySource" text' : ''});
      insert into usage_records (request_id, workspace_id, api_key_id, endpoint, model_requested, model_used, fallback_depth, status,
                                 input_tokens, output_tokens, units, credits_micro, client_request_id, error_code, latency_ms, user_id, deployment${withKeySource ? ', key_source' : ''})
      values (u."requestId", u."workspaceId", u."apiKeyId", u.endpoint, u."modelRequested", u."modelUsed", coalesce(u."fallbackDepth", 0), u.status,
              coalesce(u."inputTokens", 0), coalesce(u."outputTokens", 0), u.units, p_credits, u."clientRequestId", u."errorCode", u."latencyMs", u."userId", u.deployment${withKeySource ? `, coalesce(u."keySource", 'platform')` : ''})
      on conflict (request_id) do nothing;
      if found and u."apiKeyId" is not null and coalesce(u."inputTokens", 0) + coalesce(u."outputTokens", 0) > 0 then
        insert into key_daily_tokens (api_key_id, day, tokens)
        values (u."apiKeyId", (now() at time zone 'utc')::date, u."inputTokens" + u."outputTokens")
        on conflict (api_key_id, day) do update set tokens = key_daily_tokens.tokens + excluded.tokens;
      end if;
    end $$;
  `;
}
