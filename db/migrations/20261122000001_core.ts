/**
 * The gateway's schema. Money lives in integer micro-credits (1 credit = 1,000,000 µcr) so every sum is
 * exact; the ledger is append-only and each row carries a unique idempotency key.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('plans', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.bigInteger('monthly_credits_micro').notNullable();
    t.integer('rpm_preset').notNullable();
    t.bigInteger('daily_token_cap');
    t.bigInteger('storage_limit_bytes').notNullable();
    t.boolean('rollover').notNullable().defaultTo(false);
    t.bigInteger('rollover_cap_micro');
    t.timestamps(true, true);
  });

  await knex.schema.createTable('workspaces', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('plan_id').references('plans.id');
    t.bigInteger('storage_limit_bytes');
    t.timestamps(true, true);
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('role').notNullable().defaultTo('developer');
    t.text('prefix').notNullable();
    t.text('key_hash').notNullable().unique();
    t.text('last4').notNullable();
    t.integer('rpm_limit');
    t.bigInteger('daily_token_limit');
    t.specificType('allowed_models', 'text[]');
    t.bigInteger('cost_cap_micro');
    /** Settled spend of this key, kept in step with the ledger for the cost cap. */
    t.bigInteger('spent_micro').notNullable().defaultTo(0);
    /** Outstanding reservations of this key, so concurrent requests cannot jointly overrun the cap. */
    t.bigInteger('reserved_micro').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('last_used_at', { useTz: true });
    t.index(['workspace_id']);
  });
  await knex.raw(`alter table api_keys add constraint api_keys_role_check check (role in ('owner','admin','developer','billing','viewer'))`);
  await knex.raw('alter table api_keys add constraint api_keys_spend_check check (spent_micro >= 0 and reserved_micro >= 0)');

  await knex.schema.createTable('models', (t) => {
    t.text('slug').primary();
    t.text('provider').notNullable();
    t.text('modality').notNullable();
    t.jsonb('record').notNullable();
    /** `catalog` rows are refreshed from the repo's catalog on every start; `operator` rows never are. */
    t.text('source').notNullable().defaultTo('catalog');
    t.boolean('enabled').notNullable().defaultTo(true);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['modality']);
  });

  await knex.schema.createTable('fallback_chains', (t) => {
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('source_model').notNullable();
    t.specificType('chain', 'text[]').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'source_model']);
  });

  // Credits: buckets hold balances (plan credits of a cycle expire; topups never do); the ledger records
  // every movement. Invariant: a bucket's balance equals the sum of its ledger rows.
  await knex.schema.createTable('credit_buckets', (t) => {
    t.bigIncrements('id');
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('cycle');
    t.timestamp('expires_at', { useTz: true });
    t.bigInteger('balance_micro').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id']);
  });
  await knex.raw(`alter table credit_buckets add constraint credit_buckets_kind_check check (kind in ('plan','topup'))`);
  await knex.raw('alter table credit_buckets add constraint credit_buckets_nonnegative check (balance_micro >= 0)');
  await knex.raw(`create unique index credit_buckets_plan_cycle on credit_buckets (workspace_id, cycle) where kind = 'plan'`);

  await knex.schema.createTable('credit_ledger', (t) => {
    t.bigIncrements('id');
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.bigInteger('bucket_id').references('credit_buckets.id');
    t.text('kind').notNullable();
    t.bigInteger('amount_micro').notNullable();
    t.text('idempotency_key').notNullable().unique();
    t.text('reservation_id');
    t.text('request_id');
    t.text('api_key_id');
    t.text('model');
    t.jsonb('meta');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
    t.index(['reservation_id']);
  });
  await knex.raw(`alter table credit_ledger add constraint credit_ledger_kind_check check (kind in ('grant','topup','reserve','settle','release','refund','expire','rollover','adjust'))`);
  // Append-only: the ledger refuses updates and deletes.
  await knex.raw(`
    create function credit_ledger_append_only() returns trigger language plpgsql as $$
    begin raise exception 'credit_ledger is append-only'; end $$;
    create trigger credit_ledger_no_update before update or delete on credit_ledger
      for each row execute function credit_ledger_append_only();
  `);

  await knex.schema.createTable('reservations', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('api_key_id');
    t.text('request_id');
    t.bigInteger('amount_micro').notNullable();
    /** held -> settled | released (nothing charged: failure or cancellation). */
    t.text('status').notNullable().defaultTo('held');
    t.jsonb('allocations').notNullable();
    t.bigInteger('charged_micro');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('closed_at', { useTz: true });
    t.index(['workspace_id', 'status']);
  });

  await knex.schema.createTable('usage_records', (t) => {
    t.bigIncrements('id');
    t.text('request_id').notNullable().unique();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('api_key_id');
    t.text('endpoint').notNullable();
    t.text('model_requested').notNullable();
    t.text('model_used');
    t.integer('fallback_depth').notNullable().defaultTo(0);
    t.text('status').notNullable();
    t.bigInteger('input_tokens').notNullable().defaultTo(0);
    t.bigInteger('output_tokens').notNullable().defaultTo(0);
    t.jsonb('units');
    t.bigInteger('credits_micro').notNullable().defaultTo(0);
    t.text('client_request_id');
    t.text('error_code');
    t.integer('latency_ms');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
    t.index(['api_key_id', 'created_at']);
  });

  // Per-key quota counters shared by every API process.
  await knex.schema.createTable('rate_limit_counters', (t) => {
    t.text('bucket').notNullable();
    t.bigInteger('window_start').notNullable();
    t.integer('count').notNullable().defaultTo(0);
    t.primary(['bucket', 'window_start']);
  });
  await knex.schema.createTable('key_daily_tokens', (t) => {
    t.text('api_key_id').notNullable();
    t.date('day').notNullable();
    t.bigInteger('tokens').notNullable().defaultTo(0);
    t.primary(['api_key_id', 'day']);
  });

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('scope').notNullable();
    t.text('key').notNullable();
    t.text('body_hash').notNullable();
    t.text('resource_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'scope', 'key']);
  });

  await knex.schema.createTable('files', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('filename').notNullable();
    t.text('purpose').notNullable();
    t.bigInteger('bytes').notNullable();
    t.text('content_type').notNullable();
    t.text('storage_key').notNullable();
    t.text('sha256');
    t.text('status').notNullable();
    t.text('created_by_key_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
  });

  await knex.schema.createTable('video_jobs', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('api_key_id');
    t.text('model').notNullable();
    t.text('status').notNullable();
    t.integer('progress').notNullable().defaultTo(0);
    t.jsonb('request').notNullable();
    t.jsonb('result');
    t.jsonb('error');
    t.text('model_used');
    t.bigInteger('credits_micro').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true });
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw(`alter table video_jobs add constraint video_jobs_status_check check (status in ('queued','processing','succeeded','failed'))`);
  await knex.raw('alter table video_jobs add constraint video_jobs_progress_check check (progress between 0 and 100)');

  await knex.schema.createTable('budget_alerts', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    /** `credits`: spent credits in the cycle reach `threshold`; `percent`: that share of the plan's credits. */
    t.text('threshold_type').notNullable();
    t.bigInteger('threshold_value').notNullable();
    t.jsonb('channels').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id']);
  });
  await knex.schema.createTable('budget_alert_deliveries', (t) => {
    t.bigIncrements('id');
    t.text('alert_id').notNullable().references('budget_alerts.id').onDelete('CASCADE');
    t.text('cycle').notNullable();
    t.text('channel').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('delivered_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['alert_id', 'cycle', 'channel']);
  });

  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id');
    t.text('workspace_id');
    t.text('actor').notNullable();
    t.text('action').notNullable();
    t.text('subject_type').notNullable();
    t.text('subject_id').notNullable();
    t.jsonb('data');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
    t.index(['subject_type', 'subject_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['audit_log', 'budget_alert_deliveries', 'budget_alerts', 'video_jobs', 'files', 'idempotency_keys', 'key_daily_tokens', 'rate_limit_counters', 'usage_records', 'reservations', 'credit_ledger', 'credit_buckets', 'fallback_chains', 'models', 'api_keys', 'workspaces', 'plans']) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.raw('drop function if exists credit_ledger_append_only() cascade');
}
