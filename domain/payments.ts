/**
 * Bought credits (Stripe). A purchase is a Checkout Session at the configured price per credit; the credits
 * arrive only when a signed webhook says the payment succeeded, and leave again when it is refunded or
 * disputed. The webhook handler never adds or removes credits by what an event says happened; it records the
 * facts the event reports on the payment (paid, refunded so far, a dispute's state) and then moves the
 * ledger by the difference between what those facts say the payment is worth and what it holds
 * (`applied_micro`). So any order of deliveries, any number of each, leaves the same books:
 *  - the first credit of a payment has Stripe's payment intent id as its ledger idempotency key;
 *  - a delivery is recorded by Stripe's event id; a replay finds it applied and changes nothing;
 *  - a refund or dispute delivered before its payment is kept, and applied when the payment is.
 * Credits taken back that were already spent become debt (domain/ledger.ts `takeBack`).
 */
import type { Knex } from 'knex';
import { ConflictError, InvalidRequestError, PermissionDeniedError } from '../core/errors';
import { MICRO_PER_CREDIT, microToCredits } from '../core/money';
import { controlCharactersRefused, hasControlCharacters } from '../core/input-limits';
import type { PaymentsConfig } from '../config/env';
import type { StripeClient, StripeEvent } from '../infra/stripe';
import { audit } from './audit';
import { takeBack, topUp } from './ledger';

export type PaymentKind = 'checkout' | 'auto';
export type PaymentStatus = 'pending' | 'succeeded' | 'failed' | 'refunded' | 'partially_refunded' | 'disputed' | 'dispute_won' | 'dispute_lost';

/** The answer of the top-up API, everywhere, when no payment processor is configured. */
export function paymentsNotConfigured(): PermissionDeniedError {
  return new PermissionDeniedError(
    'Self-serve top-ups are not available on this gateway: no payment processor is configured. The gateway\'s operators add credits (ask your workspace owner to contact them).',
    { code: 'payments_not_configured' },
  );
}

/** What one purchase may be and what a credit costs, as the app shows it. */
export function topupTerms(config: PaymentsConfig | undefined) {
  if (!config) return { enabled: false as const, added_by: 'operators' as const };
  return {
    enabled: true as const,
    min_credits: config.minCredits,
    max_credits: config.maxCredits,
    price_per_credit: Number(config.pricePerCreditMinor),
    currency: config.currency,
    auto_topup_period_seconds: config.autoTopUpPeriodSeconds,
  };
}

/** The price of `credits` whole credits in the currency's smallest unit: exact, rounded up to a whole unit. */
export function amountMinorFor(credits: number, pricePerCreditMinor: string): number {
  const [whole, fraction = ''] = pricePerCreditMinor.split('.');
  const priceMicro = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  const totalMicro = BigInt(credits) * priceMicro;
  return Number((totalMicro + 999_999n) / 1_000_000n);
}

/** Whole credits within the configured bounds (400 `invalid_value` naming `param` otherwise). */
export function checkPurchaseCredits(value: unknown, config: PaymentsConfig, param = 'credits'): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < config.minCredits || value > config.maxCredits) {
    throw new InvalidRequestError(`${param} must be a whole number of credits from ${config.minCredits} to ${config.maxCredits}.`, { param, code: 'invalid_value' });
  }
  return value;
}

interface PaymentRow {
  id: string;
  workspace_id: string;
  kind: PaymentKind;
  credits_micro: string | number;
  amount_minor: string | number;
  currency: string;
  checkout_session_id: string | null;
  checkout_url: string | null;
  payment_intent_id: string | null;
  charge_id: string | null;
  receipt_url: string | null;
  paid_at: Date | null;
  refunded_minor: string | number;
  dispute_id: string | null;
  dispute_status: 'open' | 'won' | 'lost' | null;
  dispute_minor: string | number;
  applied_micro: string | number;
  failure_message: string | null;
  failed_at: Date | null;
  created_by: string;
  created_at: Date;
}

export function paymentStatus(p: Pick<PaymentRow, 'paid_at' | 'failed_at' | 'dispute_status' | 'refunded_minor' | 'amount_minor'>): PaymentStatus {
  if (!p.paid_at) return p.failed_at ? 'failed' : 'pending';
  if (p.dispute_status === 'open') return 'disputed';
  if (p.dispute_status === 'lost') return 'dispute_lost';
  if (Number(p.refunded_minor) >= Number(p.amount_minor)) return 'refunded';
  if (Number(p.refunded_minor) > 0) return 'partially_refunded';
  return p.dispute_status === 'won' ? 'dispute_won' : 'succeeded';
}

/** A payment as the API and the app show it. */
export function paymentView(p: PaymentRow) {
  return {
    object: 'billing.payment' as const,
    id: p.id,
    kind: p.kind,
    status: paymentStatus(p),
    credits: microToCredits(Number(p.credits_micro)),
    /** What was (or is to be) paid, in the currency's smallest unit (cents). */
    amount: Number(p.amount_minor),
    currency: p.currency,
    amount_refunded: Number(p.refunded_minor),
    /** Credits the payment holds now (less after a refund or a dispute). */
    credits_applied: microToCredits(Number(p.applied_micro)),
    receipt_url: p.receipt_url,
    checkout_url: p.paid_at || p.failed_at ? null : p.checkout_url,
    failure_message: p.failure_message,
    created_at: Math.floor(new Date(p.created_at).getTime() / 1000),
    paid_at: p.paid_at ? Math.floor(new Date(p.paid_at).getTime() / 1000) : null,
  };
}

export type PaymentView = ReturnType<typeof paymentView>;

export async function listPayments(db: Knex, workspaceId: string, limit = 100): Promise<PaymentView[]> {
  const rows: PaymentRow[] = await db('payments').where({ workspace_id: workspaceId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit);
  return rows.map(paymentView);
}

export async function getPaymentRow(db: Knex | Knex.Transaction, id: string): Promise<PaymentRow | undefined> {
  return db('payments').where({ id }).first();
}

/** The workspace's Stripe customer, created once (an idempotency key naming the workspace). */
async function ensureCustomer(db: Knex, stripe: StripeClient, workspaceId: string): Promise<string> {
  const existing = await db('workspace_billing').where({ workspace_id: workspaceId }).first('stripe_customer_id');
  if (existing?.stripe_customer_id) return existing.stripe_customer_id;
  const customer = await stripe.customers.create({ metadata: { workspace_id: workspaceId } }, { idempotencyKey: `customer:${workspaceId}` });
  await db.raw(
    `insert into workspace_billing (workspace_id, stripe_customer_id) values (?, ?)
     on conflict (workspace_id) do update set stripe_customer_id = coalesce(workspace_billing.stripe_customer_id, excluded.stripe_customer_id), updated_at = now()`,
    [workspaceId, customer.id],
  );
  const row = await db('workspace_billing').where({ workspace_id: workspaceId }).first('stripe_customer_id');
  return row.stripe_customer_id;
}

/**
 * A Checkout Session buying `credits` for the workspace, recorded as a pending payment `paymentId` (the same
 * id, from the caller's Idempotency-Key, returns the same session). The card is kept for automatic top-ups.
 */
export async function startCheckout(db: Knex, stripe: StripeClient, config: PaymentsConfig, opts: {
  workspaceId: string; paymentId: string; credits: number; actor: string; returnUrl: string;
}): Promise<PaymentView> {
  const known = await getPaymentRow(db, opts.paymentId);
  if (known) return paymentView(known);
  const amount = amountMinorFor(opts.credits, config.pricePerCreditMinor);
  const customer = await ensureCustomer(db, stripe, opts.workspaceId);
  const metadata = { gateway_payment_id: opts.paymentId, workspace_id: opts.workspaceId };
  const session = await stripe.checkout.sessions.create({
    mode: 'payment',
    customer,
    client_reference_id: opts.workspaceId,
    line_items: [{ quantity: 1, price_data: { currency: config.currency, unit_amount: amount, product_data: { name: `${opts.credits.toLocaleString('en-US')} credits` } } }],
    metadata,
    payment_intent_data: { metadata, setup_future_usage: 'off_session' },
    success_url: `${opts.returnUrl}?payment=${opts.paymentId}&checkout=success`,
    cancel_url: `${opts.returnUrl}?payment=${opts.paymentId}&checkout=cancelled`,
  }, { idempotencyKey: `checkout:${opts.paymentId}` });
  await db.transaction(async (trx) => {
    await trx('payments').insert({
      id: opts.paymentId, workspace_id: opts.workspaceId, kind: 'checkout', credits_micro: opts.credits * MICRO_PER_CREDIT, amount_minor: amount,
      currency: config.currency, checkout_session_id: session.id, checkout_url: session.url, created_by: opts.actor,
    }).onConflict('id').ignore();
    await audit(trx, {
      workspaceId: opts.workspaceId, actor: opts.actor, action: 'payment.checkout', subjectType: 'payment', subjectId: opts.paymentId,
      data: { credits: opts.credits, amount, currency: config.currency, checkoutSession: session.id },
    });
  });
  return paymentView((await getPaymentRow(db, opts.paymentId))!);
}

// ---- webhooks ---------------------------------------------------------------------------------------

/** Where an event's payment is found: our id (metadata we set), the Checkout Session, or the payment intent. */
interface PaymentRef {
  paymentId?: string;
  sessionId?: string;
  paymentIntentId?: string;
}

interface Facts {
  ref: PaymentRef;
  /** A refund or dispute may arrive before its payment: then it waits for it. */
  waits: boolean;
  /** What the event says about the payment, as column changes given the row (and the audit action). */
  apply(p: PaymentRow): { changes: Partial<Record<keyof PaymentRow, unknown>>; action: string; savedCard?: { customer: string; paymentMethod: string } };
}

type Obj = Record<string, any>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : typeof v === 'object' && v && typeof (v as Obj).id === 'string' ? (v as Obj).id : undefined);

function factsOf(event: StripeEvent): Facts | null {
  const o = event.data.object as unknown as Obj;
  const byMeta = str(o.metadata?.gateway_payment_id);
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return {
        ref: { paymentId: byMeta, sessionId: str(o.id) }, waits: false,
        apply: (p) => {
          const changes: Obj = { payment_intent_id: p.payment_intent_id ?? str(o.payment_intent) ?? null };
          if (o.payment_status !== 'paid') return { changes, action: 'payment.checkout_completed' };
          return paid(p, changes, Number(o.amount_total), String(o.currency ?? ''));
        },
      };
    case 'checkout.session.expired':
    case 'checkout.session.async_payment_failed':
      return {
        ref: { paymentId: byMeta, sessionId: str(o.id) }, waits: false,
        apply: (p) => (p.paid_at ? { changes: {}, action: 'payment.ignored' } : {
          changes: { failed_at: new Date(), failure_message: event.type === 'checkout.session.expired' ? 'The checkout expired before it was paid.' : 'The payment failed.' },
          action: 'payment.failed',
        }),
      };
    case 'payment_intent.succeeded':
      return {
        ref: { paymentId: byMeta, paymentIntentId: str(o.id) }, waits: false,
        apply: (p) => {
          const result = paid(p, { payment_intent_id: p.payment_intent_id ?? str(o.id), charge_id: p.charge_id ?? str(o.latest_charge) ?? null }, Number(o.amount_received), String(o.currency ?? ''));
          const customer = str(o.customer);
          const paymentMethod = str(o.payment_method);
          const reusable = o.setup_future_usage === 'off_session' || p.kind === 'auto';
          return customer && paymentMethod && reusable ? { ...result, savedCard: { customer, paymentMethod } } : result;
        },
      };
    case 'payment_intent.payment_failed':
      return {
        ref: { paymentId: byMeta, paymentIntentId: str(o.id) }, waits: false,
        apply: (p) => (p.paid_at ? { changes: {}, action: 'payment.ignored' } : {
          changes: { payment_intent_id: p.payment_intent_id ?? str(o.id), failed_at: new Date(), failure_message: String(o.last_payment_error?.message ?? 'The payment failed.').slice(0, 500) },
          action: 'payment.failed',
        }),
      };
    case 'charge.succeeded':
    case 'charge.refunded':
      return {
        ref: { paymentIntentId: str(o.payment_intent) }, waits: true,
        apply: (p) => ({
          changes: {
            charge_id: str(o.id) ?? p.charge_id, receipt_url: typeof o.receipt_url === 'string' ? o.receipt_url : p.receipt_url,
            refunded_minor: Math.max(Number(p.refunded_minor), Number(o.amount_refunded ?? 0)),
          },
          action: event.type === 'charge.refunded' ? 'payment.refunded' : 'payment.charge',
        }),
      };
    case 'charge.dispute.created':
    case 'charge.dispute.updated':
    case 'charge.dispute.funds_withdrawn':
      return {
        ref: { paymentIntentId: str(o.payment_intent) }, waits: true,
        apply: (p) => ({
          // A dispute closed before this (late) delivery stays closed.
          changes: { dispute_id: str(o.id), dispute_minor: Number(o.amount ?? 0), dispute_status: p.dispute_status === 'won' || p.dispute_status === 'lost' ? p.dispute_status : 'open' },
          action: 'payment.dispute_opened',
        }),
      };
    case 'charge.dispute.closed':
      return {
        ref: { paymentIntentId: str(o.payment_intent) }, waits: true,
        apply: () => {
          const won = o.status === 'won' || o.status === 'warning_closed';
          return { changes: { dispute_id: str(o.id), dispute_minor: Number(o.amount ?? 0), dispute_status: won ? 'won' : 'lost' }, action: won ? 'payment.dispute_won' : 'payment.dispute_lost' };
        },
      };
    default:
      return null;
  }
}

/** The payment is paid if Stripe took the amount and currency it was recorded with; anything else is not credited. */
function paid(p: PaymentRow, changes: Obj, amount: number, currency: string): ReturnType<Facts['apply']> {
  if (p.paid_at) return { changes, action: 'payment.confirmed' };
  if (amount !== Number(p.amount_minor) || currency.toLowerCase() !== p.currency) {
    return { changes: { ...changes, failure_message: `Stripe reported ${amount} ${currency}, not the ${Number(p.amount_minor)} ${p.currency} of this payment: not credited.`, failed_at: new Date() }, action: 'payment.amount_mismatch' };
  }
  return { changes: { ...changes, paid_at: new Date(), failed_at: null, failure_message: null }, action: 'payment.succeeded' };
}

/** What the payment's facts say it is worth in the ledger now (micro-credits). */
export function creditsDueMicro(p: Pick<PaymentRow, 'paid_at' | 'credits_micro' | 'amount_minor' | 'refunded_minor' | 'dispute_status' | 'dispute_minor'>): number {
  if (!p.paid_at) return 0;
  const credits = BigInt(p.credits_micro);
  const amount = BigInt(p.amount_minor);
  const share = (minor: bigint) => (credits * (minor < amount ? minor : amount)) / amount;
  const refunded = share(BigInt(p.refunded_minor));
  const disputed = p.dispute_status === 'open' || p.dispute_status === 'lost' ? share(BigInt(p.dispute_minor)) : 0n;
  const due = credits - refunded - disputed;
  return Number(due > 0n ? due : 0n);
}

export interface StripeEventOutcome {
  outcome: 'applied' | 'duplicate' | 'waiting' | 'ignored';
  paymentId?: string;
  workspaceId?: string;
  /** An automatic top-up failed with this delivery: its workspace's billing people are told. */
  autoTopUpFailed?: boolean;
  /** Credits moved in the ledger by this delivery (negative: taken back). */
  movedMicro?: number;
}

/** Applies one verified Stripe event, exactly once, in one transaction. */
export async function applyStripeEvent(db: Knex, event: StripeEvent): Promise<StripeEventOutcome> {
  const facts = factsOf(event);
  return db.transaction(async (trx) => {
    const inserted = await trx.raw(
      `insert into stripe_events (id, type, payment_intent_id, payload) values (?, ?, ?, ?::jsonb) on conflict (id) do nothing returning id`,
      [event.id, event.type, facts?.ref.paymentIntentId ?? null, JSON.stringify(event)],
    );
    if (inserted.rows.length === 0) {
      const known = await trx('stripe_events').where({ id: event.id }).forUpdate().first('applied_at');
      if (known.applied_at) return { outcome: 'duplicate' as const };
    }
    const markApplied = () => trx('stripe_events').where({ id: event.id }).update({ applied_at: trx.fn.now() });
    if (!facts) {
      await markApplied();
      return { outcome: 'ignored' as const };
    }
    const payment = await findPaymentForUpdate(trx, facts.ref);
    if (!payment) {
      if (facts.waits) return { outcome: 'waiting' as const };
      await markApplied();
      return { outcome: 'ignored' as const };
    }
    let row = await applyFacts(trx, payment, facts, event);
    // A refund or dispute that came first waited for this payment (its intent id was not known yet, or was
    // recorded by the automatic top-up without a delivery): apply it now, in the order received.
    if (row.payment_intent_id) {
      const waiting: Array<{ id: string; payload: StripeEvent }> = await trx('stripe_events')
        .where({ payment_intent_id: row.payment_intent_id }).whereNull('applied_at').whereNot({ id: event.id }).orderBy('received_at').forUpdate().select('id', 'payload');
      for (const w of waiting) {
        const wFacts = factsOf(w.payload);
        if (wFacts) row = await applyFacts(trx, row, wFacts, w.payload);
        await trx('stripe_events').where({ id: w.id }).update({ applied_at: trx.fn.now() });
      }
    }
    const movedMicro = await reconcile(trx, row, event.id);
    await markApplied();
    const failed = !payment.failed_at && Boolean(row.failed_at) && !row.paid_at;
    return { outcome: 'applied' as const, paymentId: row.id, workspaceId: row.workspace_id, autoTopUpFailed: failed && row.kind === 'auto', movedMicro };
  });
}

async function findPaymentForUpdate(trx: Knex.Transaction, ref: PaymentRef): Promise<PaymentRow | undefined> {
  const tries: Array<[string, string | undefined]> = [['id', ref.paymentId], ['checkout_session_id', ref.sessionId], ['payment_intent_id', ref.paymentIntentId]];
  for (const [column, value] of tries) {
    if (!value) continue;
    const row = await trx('payments').where({ [column]: value }).forUpdate().first();
    if (row) return row;
  }
  return undefined;
}

const QUIET_ACTIONS = new Set(['payment.confirmed', 'payment.ignored', 'payment.charge', 'payment.checkout_completed']);

async function applyFacts(trx: Knex.Transaction, p: PaymentRow, facts: Facts, event: StripeEvent): Promise<PaymentRow> {
  const { changes, action, savedCard } = facts.apply(p);
  const [row] = await trx('payments').where({ id: p.id }).update({ ...changes, updated_at: trx.fn.now() }, '*');
  if (savedCard) {
    await trx.raw(
      `insert into workspace_billing (workspace_id, stripe_customer_id, payment_method_id) values (?, ?, ?)
       on conflict (workspace_id) do update set stripe_customer_id = excluded.stripe_customer_id, payment_method_id = excluded.payment_method_id, updated_at = now()`,
      [p.workspace_id, savedCard.customer, savedCard.paymentMethod],
    );
  }
  const o = event.data.object as unknown as Obj;
  const card = o.payment_method_details?.card;
  if (event.type === 'charge.succeeded' && card?.last4 && str(o.payment_method)) {
    await trx('workspace_billing').where({ workspace_id: p.workspace_id, payment_method_id: str(o.payment_method) })
      .update({ payment_method_label: `${String(card.brand ?? 'card').slice(0, 20)} •••• ${String(card.last4).slice(0, 4)}` });
  }
  // Deliveries that only confirm what is known, or carry the receipt, are not news for the audit log.
  if (!QUIET_ACTIONS.has(action)) await audit(trx, {
    workspaceId: p.workspace_id, actor: 'stripe', action, subjectType: 'payment', subjectId: p.id,
    data: { event: event.id, type: event.type, status: paymentStatus(row), amount: Number(row.amount_minor), currency: row.currency, refunded: Number(row.refunded_minor), dispute: row.dispute_status },
  });
  return row;
}

/** Moves the ledger to what the payment is worth; returns the move (micro-credits). */
async function reconcile(trx: Knex.Transaction, p: PaymentRow, eventId: string): Promise<number> {
  const due = creditsDueMicro(p);
  const delta = due - Number(p.applied_micro);
  if (delta === 0) return 0;
  if (delta > 0) {
    // The payment's first credit carries Stripe's id; a later one (a dispute won back) the event's.
    const first = `stripe:${p.payment_intent_id ?? p.checkout_session_id ?? p.id}`;
    const applied = await topUp(trx, { workspaceId: p.workspace_id, amountMicro: delta, idempotencyKey: first, actor: `stripe:${p.id}` });
    if (!applied) await topUp(trx, { workspaceId: p.workspace_id, amountMicro: delta, idempotencyKey: `stripe:${eventId}:credit`, actor: `stripe:${p.id}` });
  } else {
    await takeBack(trx, { workspaceId: p.workspace_id, amountMicro: -delta, idempotencyKey: `stripe:${eventId}:takeback`, meta: { payment: p.id, event: eventId } });
  }
  await trx('payments').where({ id: p.id }).update({ applied_micro: due });
  return delta;
}

// ---- operators --------------------------------------------------------------------------------------

/**
 * Credits an operator adds by hand (the CLI, or `POST /operator/credits` with the operator token): a topup,
 * once per idempotency key, audited with who did it and why.
 */
export async function addOperatorCredits(db: Knex, opts: { workspaceId: string; amountMicro: number; operator: string; reason: string; idempotencyKey: string }): Promise<{ applied: boolean }> {
  const reason = opts.reason.trim();
  if (!reason || reason.length > 500) throw new InvalidRequestError('reason must say why, in 1 to 500 characters.', { param: 'reason' });
  const operator = opts.operator.trim();
  if (hasControlCharacters(opts.reason) || hasControlCharacters(opts.operator)) throw controlCharactersRefused(hasControlCharacters(opts.reason) ? 'reason' : 'operator');
  if (!operator || operator.length > 200) throw new InvalidRequestError('operator must name who adds the credits, in 1 to 200 characters.', { param: 'operator' });
  if (!Number.isSafeInteger(opts.amountMicro) || opts.amountMicro <= 0 || opts.amountMicro > 1_000_000_000 * MICRO_PER_CREDIT) {
    throw new InvalidRequestError('credits must be a positive amount of at most 1000000000, with at most 6 decimals.', { param: 'credits' });
  }
  const workspace = await db('workspaces').where({ id: opts.workspaceId }).first('id');
  if (!workspace) throw new InvalidRequestError(`No workspace '${opts.workspaceId}'.`, { param: 'workspace_id', code: 'workspace_not_found' });
  return db.transaction(async (trx) => {
    const actor = `operator:${operator}`;
    const applied = await topUp(trx, { workspaceId: opts.workspaceId, amountMicro: opts.amountMicro, idempotencyKey: `operator:${opts.workspaceId}:${opts.idempotencyKey}`, actor });
    if (applied) {
      await audit(trx, {
        workspaceId: opts.workspaceId, actor, action: 'credits.operator_add', subjectType: 'workspace', subjectId: opts.workspaceId,
        data: { credits: microToCredits(opts.amountMicro), reason, idempotencyKey: opts.idempotencyKey },
      });
    }
    return { applied };
  });
}

/** A conflict for a change that needs a saved card first. */
export function noSavedCard(): ConflictError {
  return new ConflictError('Automatic top-ups charge the card saved by a purchase: buy credits once first.', { code: 'no_saved_payment_method' });
}

