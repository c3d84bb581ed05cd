/**
 * Overage is recorded, never dropped: a settlement above what the workspace's balance covers charges the
 * rest to the workspace's debt bucket (balance <= 0, at most one per workspace), paid first by the next
 * grant or topup (`repay` rows: out of the paying bucket, into the debt bucket). The usage record keeps the
 * part of its charge that became debt. The ledger's sum still equals the buckets' sum at all times.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table credit_buckets drop constraint credit_buckets_kind_check`);
  await knex.raw(`alter table credit_buckets add constraint credit_buckets_kind_check check (kind in ('plan','topup','debt'))`);
  await knex.raw(`alter table credit_buckets drop constraint credit_buckets_nonnegative`);
  await knex.raw(`alter table credit_buckets add constraint credit_buckets_sign check (case when kind = 'debt' then balance_micro <= 0 else balance_micro >= 0 end)`);
  await knex.raw(`create unique index credit_buckets_debt on credit_buckets (workspace_id) where kind = 'debt'`);
  await knex.raw(`alter table credit_ledger drop constraint credit_ledger_kind_check`);
  await knex.raw(`alter table credit_ledger add constraint credit_ledger_kind_check check (kind in ('grant','topup','reserve','settle','release','refund','expire','rollover','adjust','repay'))`);
  await knex.schema.alterTable('usage_records', (t) => {
    /** The part of `credits_micro` no balance covered when it was settled (charged to the workspace's debt). */
    t.bigInteger('debt_micro').notNullable().defaultTo(0);
  });

  await knex.raw(`
    create or replace function gateway_settle(p_id text, p_charge bigint, p_model text, p_usage jsonb)
    returns jsonb language plpgsql as $$
    declare
      v_row reservations%rowtype;
      v_alloc record;
      v_bucket record;
      v_remaining bigint := p_charge;
      v_take bigint;
      v_debt_bucket bigint;
    begin
      select * into v_row from reservations where id = p_id for update;
      if not found then raise exception 'reservation % does not exist', p_id; end if;
      if v_row.status <> 'held' then
        return jsonb_build_object('chargedMicro', coalesce(v_row.charged_micro, 0), 'debtMicro', 0, 'repeated', true);
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

      -- ...and the exact charge is drawn in spending order (normally from those same buckets)...
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

      -- ...and what no balance covered becomes the workspace's debt (locked last, after every spendable bucket).
      if v_remaining > 0 then
        insert into credit_buckets (workspace_id, kind, balance_micro) values (v_row.workspace_id, 'debt', 0)
        on conflict (workspace_id) where kind = 'debt' do nothing;
        select id into v_debt_bucket from credit_buckets where workspace_id = v_row.workspace_id and kind = 'debt' for update;
        update credit_buckets set balance_micro = balance_micro - v_remaining where id = v_debt_bucket;
        insert into credit_ledger (workspace_id, bucket_id, kind, amount_micro, idempotency_key, reservation_id, request_id, api_key_id, model, meta)
        values (v_row.workspace_id, v_debt_bucket, 'settle', -v_remaining, p_id || ':settle:debt', p_id, v_row.request_id, v_row.api_key_id, p_model,
                jsonb_build_object('debt', true));
      end if;

      if v_row.api_key_id is not null and p_charge > 0 then
        update api_keys set spent_micro = spent_micro + p_charge where id = v_row.api_key_id and cost_cap_micro is not null;
      end if;
      update reservations set status = 'settled', charged_micro = p_charge, closed_at = now() where id = p_id;
      if p_usage is not null then
        perform gateway_record_usage(p_usage, p_charge);
        if v_remaining > 0 then
          update usage_records set debt_micro = v_remaining where request_id = p_usage->>'requestId';
        end if;
      end if;
      return jsonb_build_object('chargedMicro', p_charge, 'debtMicro', v_remaining, 'repeated', false);
    end $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('usage_records', (t) => t.dropColumn('debt_micro'));
  await knex.raw(`drop index if exists credit_buckets_debt`);
}
