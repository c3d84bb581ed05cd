/**
 * Bought credits. A payment (`payments`) is a Stripe Checkout purchase or an automatic top-up: what it buys
 * (credits), what it costs (amount in the currency's smallest unit), and the facts Stripe's signed webhooks
 * reported about it (paid, refunded so far, a dispute and its outcome). `applied_micro` is what the payment
 * currently holds in the ledger; every webhook moves the ledger by the difference to what the facts say it
 * should hold, so deliveries in any order or number leave the same books. `stripe_events` keeps every
 * delivery by Stripe's event id (a replay is recognised), and holds a refund or dispute whose payment is not
 * known yet until it is. `workspace_billing` keeps a workspace's Stripe customer, its saved card and its
 * automatic top-up settings.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payments', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('id').inTable('workspaces').onDelete('cascade');
    t.text('kind').notNullable();
    t.bigInteger('credits_micro').notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.text('currency').notNullable();
    t.text('checkout_session_id').unique();
    t.text('checkout_url');
    t.text('payment_intent_id').unique();
    t.text('charge_id');
    t.text('receipt_url');
    t.timestamp('paid_at', { useTz: true });
    t.bigInteger('refunded_minor').notNullable().defaultTo(0);
    t.text('dispute_id');
    t.text('dispute_status');
    t.bigInteger('dispute_minor').notNullable().defaultTo(0);
    t.bigInteger('applied_micro').notNullable().defaultTo(0);
    t.text('failure_message');
    t.timestamp('failed_at', { useTz: true });
    t.timestamp('failure_notified_at', { useTz: true });
    /** Automatic top-ups: the period (AUTO_TOPUP_PERIOD_SECONDS since the epoch) it belongs to; one per workspace and period. */
    t.bigInteger('auto_period');
    t.text('created_by').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw(`alter table payments add constraint payments_kind_check check (kind in ('checkout','auto'))`);
  await knex.raw(`alter table payments add constraint payments_amounts check (credits_micro > 0 and amount_minor > 0 and applied_micro >= 0 and refunded_minor >= 0 and dispute_minor >= 0)`);
  await knex.raw(`alter table payments add constraint payments_dispute_check check (dispute_status is null or dispute_status in ('open','won','lost'))`);
  await knex.raw(`create unique index payments_auto_period on payments (workspace_id, auto_period) where kind = 'auto'`);

  await knex.schema.createTable('stripe_events', (t) => {
    t.text('id').primary();
    t.text('type').notNullable();
    t.text('payment_intent_id');
    t.jsonb('payload').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    /** Null while the event waits for its payment to be known (a refund delivered before the payment). */
    t.timestamp('applied_at', { useTz: true });
    t.index(['payment_intent_id']);
  });

  await knex.schema.createTable('workspace_billing', (t) => {
    t.text('workspace_id').primary().references('id').inTable('workspaces').onDelete('cascade');
    t.text('stripe_customer_id');
    t.text('payment_method_id');
    t.text('payment_method_label');
    t.boolean('auto_topup_enabled').notNullable().defaultTo(false);
    t.bigInteger('auto_topup_threshold_micro');
    t.bigInteger('auto_topup_credits_micro');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  // Whether a person made a workspace before (the free plan's credits go to one workspace per person).
  await knex.raw(`create index audit_log_actor_action on audit_log (actor, action)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists audit_log_actor_action');
  await knex.schema.dropTable('workspace_billing');
  await knex.schema.dropTable('stripe_events');
  await knex.schema.dropTable('payments');
}
