/**
 * Giving back a hold that was never taken is a no-op. A workflow compensates (on failure, cancellation)
 * for every hold it asked for, including one whose reserve never reached the database, and ledger steps
 * are retried until they succeed: a refund that raised for a missing reservation would retry forever.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function gateway_refund(p_id text, p_reason text, p_usage jsonb)
    returns jsonb language plpgsql as $$
    declare
      v_row reservations%rowtype;
      v_alloc record;
    begin
      select * into v_row from reservations where id = p_id for update;
      if not found then
        if p_usage is not null then perform gateway_record_usage(p_usage, 0); end if;
        return null;
      end if;
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
  // The sweeper looks for old holds; only held rows are indexed.
  await knex.raw(`create index reservations_held_created on reservations (created_at) where status = 'held'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists reservations_held_created');
}
