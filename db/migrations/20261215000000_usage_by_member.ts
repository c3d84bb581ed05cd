/**
 * The member who made a request in the Playground, on its usage record: Playground runs have no API key, so
 * usage by member counts them under `user_id` (API requests stay with their key's creator).
 * gateway_record_usage reads the record's new `userId` field (domain/usage-record.ts names the same fields).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('usage_records', (t) => {
    t.text('user_id');
  });
  await knex.raw(recordUsage(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordUsage(false));
  await knex.schema.alterTable('usage_records', (t) => t.dropColumn('user_id'));
}

function recordUsage(withMember: boolean): string {
  return `
    create or replace function gateway_record_usage(p_usage jsonb, p_credits bigint)
    returns void language plpgsql as $$
    declare
      u record;
    begin
      select * into u from jsonb_to_record(p_usage) as x(
        "requestId" text, "workspaceId" text, "apiKeyId" text, endpoint text, "modelRequested" text, "modelUsed" text,
        "fallbackDepth" int, status text, "inputTokens" bigint, "outputTokens" bigint, units jsonb,
        "clientRequestId" text, "errorCode" text, "latencyMs" int${withMember ? ', "userId" text' : ''});
      insert into usage_records (request_id, workspace_id, api_key_id, endpoint, model_requested, model_used, fallback_depth, status,
                                 input_tokens, output_tokens, units, credits_micro, client_request_id, error_code, latency_ms${withMember ? ', user_id' : ''})
      values (u."requestId", u."workspaceId", u."apiKeyId", u.endpoint, u."modelRequested", u."modelUsed", coalesce(u."fallbackDepth", 0), u.status,
              coalesce(u."inputTokens", 0), coalesce(u."outputTokens", 0), u.units, p_credits, u."clientRequestId", u."errorCode", u."latencyMs"${withMember ? ', u."userId"' : ''})
      on conflict (request_id) do nothing;
      if found and u."apiKeyId" is not null and coalesce(u."inputTokens", 0) + coalesce(u."outputTokens", 0) > 0 then
        insert into key_daily_tokens (api_key_id, day, tokens)
        values (u."apiKeyId", (now() at time zone 'utc')::date, u."inputTokens" + u."outputTokens")
        on conflict (api_key_id, day) do update set tokens = key_daily_tokens.tokens + excluded.tokens;
      end if;
    end $$;
  `;
}
