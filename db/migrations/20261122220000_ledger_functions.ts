/**
 * The request path's ledger steps as single database calls. Holding, settling and refunding each touch a
 * workspace's bucket rows under lock; done as one statement, a lock is held for microseconds inside the
 * database instead of across several client round trips (which, under load, wait on a busy event loop and
 * serialize every request of a workspace behind them).
 *
 * Lock order everywhere: reservation row, then the key row (capped keys only), then buckets in spending
 * order (plan credits, soonest expiry first, then topups), then usage rows. Errors carry their own
 * SQLSTATE: GW402 (the balance cannot cover the hold), GW403 (the key's cost cap would be passed).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function gateway_reserve(p_id text, p_workspace text, p_key text, p_amount bigint, p_request text, p_model text)
    returns jsonb language plpgsql as $$
    declare
      v_row reservations%rowtype;
      v_cap bigint;
      v_remaining bigint := p_amount;
      v_allocations jsonb := '[]'::jsonb;
      v_bucket record;
      v_take bigint;
    begin
      select * into v_row from reservations where id = p_id;
      if found then return to_jsonb(v_row); end if;

      -- Only keys with a cost cap track their holds; other keys' rows are never locked.
      if p_key is not null then
        update api_keys set reserved_micro = reserved_micro + p_amount
         where id = p_key and cost_cap_micro is not null and spent_micro + reserved_micro + p_amount <= cost_cap_micro;
        if not found then
          select cost_cap_micro into v_cap from api_keys where id = p_key;
          if v_cap is not null then
            raise exception 'cost cap reached' using errcode = 'GW403', detail = v_cap::text;
          end if;
        end if;
      end if;

      for v_bucket in
        select id, balance_micro from credit_buckets
         where workspace_id = p_workspace and balance_micro > 0 and (expires_at is null or expires_at > now())
         order by (kind = 'topup'), expires_at nulls last, id
         for update
      loop
        exit when v_remaining = 0;
        v_take := least(v_bucket.balance_micro, v_remaining);
        update credit_buckets set balance_micro = balance_micro - v_take where id = v_bucket.id;
        insert into credit_ledger (workspace_id, bucket_id, kind, amount_micro, idempotency_key, reservation_id, request_id, api_key_id, model)
        values (p_workspace, v_bucket.id, 'reserve', -v_take, p_id || ':reserve:' || v_bucket.id, p_id, p_request, p_key, p_model);
        v_allocations := v_allocations || jsonb_build_object('bucketId', v_bucket.id, 'amountMicro', v_take);
        v_remaining := v_remaining - v_take;
      end loop;
      if v_remaining > 0 then
        raise exception 'insufficient credits' using errcode = 'GW402';
      end if;

      insert into reservations (id, workspace_id, api_key_id, request_id, amount_micro, status, allocations)
      values (p_id, p_workspace, p_key, p_request, p_amount, 'held', v_allocations)
      returning * into v_row;
      return to_jsonb(v_row);
    end $$;
  `);

  await knex.raw(`
    create or replace function gateway_record_usage(p_usage jsonb, p_credits bigint)
    returns void language plpgsql as $$
    declare
      u record;
    begin
      select * into u from jsonb_to_record(p_usage) as x(
        "requestId" text, "workspaceId" text, "apiKeyId" text, endpoint text, "modelRequested" text, "modelUsed" text,
        "fallbackDepth" int, status text, "inputTokens" bigint, "outputTokens" bigint, units jsonb,
        "clientRequestId" text, "errorCode" text, "latencyMs" int);
      insert into usage_records (request_id, workspace_id, api_key_id, endpoint, model_requested, model_used, fallback_depth, status,
                                 input_tokens, output_tokens, units, credits_micro, client_request_id, error_code, latency_ms)
      values (u."requestId", u."workspaceId", u."apiKeyId", u.endpoint, u."modelRequested", u."modelUsed", coalesce(u."fallbackDepth", 0), u.status,
              coalesce(u."inputTokens", 0), coalesce(u."outputTokens", 0), u.units, p_credits, u."clientRequestId", u."errorCode", u."latencyMs")
      on conflict (request_id) do nothing;
      if found and u."apiKeyId" is not null and coalesce(u."inputTokens", 0) + coalesce(u."outputTokens", 0) > 0 then
        insert into key_daily_tokens (api_key_id, day, tokens)
        values (u."apiKeyId", (now() at time zone 'utc')::date, u."inputTokens" + u."outputTokens")
        on conflict (api_key_id, day) do update set tokens = key_daily_tokens.tokens + excluded.tokens;
      end if;
    end $$;
  `);

  await knex.raw(`
    create or replace function gateway_settle(p_id text, p_charge bigint, p_model text, p_usage jsonb)
    returns jsonb language plpgsql as $$
    declare
      v_row reservations%rowtype;
      v_alloc record;
      v_bucket record;
      v_remaining bigint := p_charge;
      v_take bigint;
      v_charged bigint;
    begin
      select * into v_row from reservations where id = p_id for update;
      if not found then raise exception 'reservation % does not exist', p_id; end if;
      if v_row.status <> 'held' then
        return jsonb_build_object('chargedMicro', coalesce(v_row.charged_micro, 0), 'uncoveredMicro', 0, 'repeated', true);
      end if;
      if v_row.api_key_id is not null then
        update api_keys set reserved_micro = greatest(reserved_micro - v_row.amount_micro, 0) where id = v_row.api_key_id and cost_cap_micro is not null;
      end if;

      -- The hold comes back to the buckets it came from...
      for v_alloc in select * from jsonb_to_recordset(v_row.allocations) as x("bucketId" bigint, "amountMicro" bigint) loop
        update credit_buckets set balance_micro = balance_micro + v_alloc."amountMicro" where id = v_alloc."bucketId";
        insert into credit_ledger (workspace_id, bucket_id, kind, amount_micro, idempotency_key, reservation_id, request_id, api_key_id, model)
        values (v_row.workspace_id, v_alloc."bucketId", 'release', v_alloc."amountMicro", p_id || ':release:' || v_alloc."bucketId", p_id, v_row.request_id, v_row.api_key_id, p_model);
      end loop;

      -- ...and the exact charge is drawn in spending order (normally from those same buckets).
      if v_remaining > 0 then
        for v_bucket in
          select id, balance_micro from credit_buckets
           where workspace_id = v_row.workspace_id and balance_micro > 0 and (expires_at is null or expires_at > now())
           order by (kind = 'topup'), expires_at nulls last, id
           for update
        loop
          exit when v_remaining = 0;
          v_take := least(v_bucket.balance_micro, v_remaining);
          update credit_buckets set balance_micro = balance_micro - v_take where id = v_bucket.id;
          insert into credit_ledger (workspace_id, bucket_id, kind, amount_micro, idempotency_key, reservation_id, request_id, api_key_id, model)
          values (v_row.workspace_id, v_bucket.id, 'settle', -v_take, p_id || ':settle:' || v_bucket.id, p_id, v_row.request_id, v_row.api_key_id, p_model);
          v_remaining := v_remaining - v_take;
        end loop;
      end if;
      v_charged := p_charge - v_remaining;

      if v_row.api_key_id is not null and v_charged > 0 then
        update api_keys set spent_micro = spent_micro + v_charged where id = v_row.api_key_id and cost_cap_micro is not null;
      end if;
      update reservations set status = 'settled', charged_micro = v_charged, closed_at = now() where id = p_id;
      if p_usage is not null then perform gateway_record_usage(p_usage, v_charged); end if;
      return jsonb_build_object('chargedMicro', v_charged, 'uncoveredMicro', v_remaining, 'repeated', false);
    end $$;
  `);

  await knex.raw(`
    create or replace function gateway_refund(p_id text, p_reason text, p_usage jsonb)
    returns jsonb language plpgsql as $$
    declare
      v_row reservations%rowtype;
      v_alloc record;
    begin
      select * into v_row from reservations where id = p_id for update;
      if not found then raise exception 'reservation % does not exist', p_id; end if;
      if v_row.status = 'held' then
        if v_row.api_key_id is not null then
          update api_keys set reserved_micro = greatest(reserved_micro - v_row.amount_micro, 0) where id = v_row.api_key_id and cost_cap_micro is not null;
        end if;
        for v_alloc in select * from jsonb_to_recordset(v_row.allocations) as x("bucketId" bigint, "amountMicro" bigint) loop
          update credit_buckets set balance_micro = balance_micro + v_alloc."amountMicro" where id = v_alloc."bucketId";
          insert into credit_ledger (workspace_id, bucket_id, kind, amount_micro, idempotency_key, reservation_id, request_id, api_key_id, meta)
          values (v_row.workspace_id, v_alloc."bucketId", 'refund', v_alloc."amountMicro", p_id || ':refund:' || v_alloc."bucketId", p_id, v_row.request_id, v_row.api_key_id,
                  jsonb_build_object('reason', p_reason));
        end loop;
        update reservations set status = 'released', charged_micro = 0, closed_at = now() where id = p_id returning * into v_row;
      end if;
      if p_usage is not null then perform gateway_record_usage(p_usage, 0); end if;
      return to_jsonb(v_row);
    end $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists gateway_refund(text, text, jsonb)');
  await knex.raw('drop function if exists gateway_settle(text, bigint, text, jsonb)');
  await knex.raw('drop function if exists gateway_record_usage(jsonb, bigint)');
  await knex.raw('drop function if exists gateway_reserve(text, text, text, bigint, text, text)');
}
