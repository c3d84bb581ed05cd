/**
 * Many deployments per model (providers/deployments.ts): the usage record names the deployment that served
 * (null for a model's one implicit deployment), and deployments cool down in Postgres when Redis is not
 * configured or not answering (domain/deployment-state.ts). gateway_record_usage reads the record's new
 * `deployment` field (domain/usage-record.ts names the same fields).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('usage_records', (t) => {
    t.text('deployment');
  });
  await knex.schema.createTable('deployment_cooldowns', (t) => {
    t.text('deployment').primary();
    t.bigInteger('until_ms').notNullable();
  });
  await knex.raw(recordUsage(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordUsage(false));
  await knex.schema.dropTable('deployment_cooldowns');
  await knex.schema.alterTable('usage_records', (t) => t.dropColumn('deployment'));
}

function recordUsage(withDeployment: boolean): string {
  return `
    create or replace function gateway_record_usage(p_usage jsonb, p_credits bigint)
    returns void language plpgsql as $$
    declare
      u record;
    begin
      select * into u from jsonb_to_record(p_usage) as x(
        "requestId" text, "workspaceId" text, "apiKeyId" text, endpoint text, "modelRequested" text, "modelUsed" text,
        "fallbackDepth" int, status text, "inputTokens" bigint, "outputTokens" bigint, units jsonb,
        "clientRequestId" text, "errorCode" text, "latencyMs" int, "userId" text${withDeployment ? ', deployment text' : ''});
      insert into usage_records (request_id, workspace_id, api_key_id, endpoint, model_requested, model_used, fallback_depth, status,
                                 input_tokens, output_tokens, units, credits_micro, client_request_id, error_code, latency_ms, user_id${withDeployment ? ', deployment' : ''})
      values (u."requestId", u."workspaceId", u."apiKeyId", u.endpoint, u."modelRequested", u."modelUsed", coalesce(u."fallbackDepth", 0), u.status,
              coalesce(u."inputTokens", 0), coalesce(u."outputTokens", 0), u.units, p_credits, u."clientRequestId", u."errorCode", u."latencyMs", u."userId"${withDeployment ? ', u.deployment' : ''})
      on conflict (request_id) do nothing;
      if found and u."apiKeyId" is not null and coalesce(u."inputTokens", 0) + coalesce(u."outputTokens", 0) > 0 then
        insert into key_daily_tokens (api_key_id, day, tokens)
        values (u."apiKeyId", (now() at time zone 'utc')::date, u."inputTokens" + u."outputTokens")
        on conflict (api_key_id, day) do update set tokens = key_daily_tokens.tokens + excluded.tokens;
      end if;
    end $$;
  `;
}
