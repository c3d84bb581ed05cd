/**
 * Automatic top-ups: when a workspace's balance falls below its threshold, the card saved by an earlier
 * purchase is charged (a PaymentIntent, off session) for the set number of credits, at most once per period
 * (AUTO_TOPUP_PERIOD_SECONDS). One payment row per workspace and period (a unique index), and Stripe's
 * idempotency key names the workspace and the period, so a crossing is never charged twice, whatever
 * retries, replays or signals. The credits arrive, like every purchase's, with the signed webhook.
 */
import type { Knex } from 'knex';
import { InvalidRequestError } from '../core/errors';
import { newId } from '../core/ids';
import { creditsToMicro, MICRO_PER_CREDIT, microToCredits } from '../core/money';
import type { PaymentsConfig } from '../config/env';
import { isStripeRefusal, type StripeClient } from '../infra/stripe';
import { audit } from './audit';
import { getBalance } from './ledger';
import { amountMinorFor, checkPurchaseCredits, getPaymentRow, noSavedCard, paymentsNotConfigured } from './payments';

export interface AutoTopUpSettings {
  enabled: boolean;
  thresholdMicro: number | null;
  creditsMicro: number | null;
  paymentMethodLabel: string | null;
  hasPaymentMethod: boolean;
}

async function settingsRow(db: Knex | Knex.Transaction, workspaceId: string) {
  return db('workspace_billing').where({ workspace_id: workspaceId }).first();
}

export async function autoTopUpSettings(db: Knex, workspaceId: string): Promise<AutoTopUpSettings> {
  const row = await settingsRow(db, workspaceId);
  return {
    enabled: Boolean(row?.auto_topup_enabled),
    thresholdMicro: row?.auto_topup_threshold_micro == null ? null : Number(row.auto_topup_threshold_micro),
    creditsMicro: row?.auto_topup_credits_micro == null ? null : Number(row.auto_topup_credits_micro),
    paymentMethodLabel: row?.payment_method_label ?? (row?.payment_method_id ? 'saved card' : null),
    hasPaymentMethod: Boolean(row?.payment_method_id && row?.stripe_customer_id),
  };
}

/** The settings with the workspace's latest automatic top-up, as the API and the app show them. */
export async function autoTopUpView(db: Knex, workspaceId: string) {
  const s = await autoTopUpSettings(db, workspaceId);
  const last = await db('payments').where({ workspace_id: workspaceId, kind: 'auto' }).orderBy('created_at', 'desc').first('id', 'failure_message', 'failed_at', 'paid_at', 'created_at');
  return {
    object: 'billing.auto_topup' as const,
    enabled: s.enabled,
    threshold: s.thresholdMicro === null ? null : microToCredits(s.thresholdMicro),
    credits: s.creditsMicro === null ? null : microToCredits(s.creditsMicro),
    payment_method: s.paymentMethodLabel,
    last_failure: last?.failed_at && !last.paid_at ? { payment_id: last.id, message: last.failure_message as string, at: Math.floor(new Date(last.failed_at).getTime() / 1000) } : null,
  };
}

/** Turns automatic top-ups on (threshold and credits required, a saved card too) or off. Audited. */
export async function setAutoTopUp(db: Knex, config: PaymentsConfig | undefined, opts: { workspaceId: string; enabled: boolean; threshold?: number; credits?: number; actor: string }): Promise<void> {
  if (!config) throw paymentsNotConfigured();
  let thresholdMicro: number | null = null;
  let creditsMicro: number | null = null;
  if (opts.enabled) {
    if (typeof opts.threshold !== 'number' || !Number.isInteger(opts.threshold) || opts.threshold < 0 || opts.threshold > 1_000_000_000) {
      throw new InvalidRequestError('threshold must be a whole number of credits from 0 to 1000000000.', { param: 'threshold', code: 'invalid_value' });
    }
    thresholdMicro = creditsToMicro(opts.threshold);
    creditsMicro = checkPurchaseCredits(opts.credits, config) * MICRO_PER_CREDIT;
    if (!(await autoTopUpSettings(db, opts.workspaceId)).hasPaymentMethod) throw noSavedCard();
  }
  await db.transaction(async (trx) => {
    await trx.raw(
      `insert into workspace_billing (workspace_id, auto_topup_enabled, auto_topup_threshold_micro, auto_topup_credits_micro) values (?, ?, ?, ?)
       on conflict (workspace_id) do update set auto_topup_enabled = excluded.auto_topup_enabled,
         auto_topup_threshold_micro = coalesce(excluded.auto_topup_threshold_micro, workspace_billing.auto_topup_threshold_micro),
         auto_topup_credits_micro = coalesce(excluded.auto_topup_credits_micro, workspace_billing.auto_topup_credits_micro), updated_at = now()`,
      [opts.workspaceId, opts.enabled, thresholdMicro, creditsMicro],
    );
    await audit(trx, {
      workspaceId: opts.workspaceId, actor: opts.actor, action: opts.enabled ? 'billing.auto_topup_enable' : 'billing.auto_topup_disable', subjectType: 'workspace', subjectId: opts.workspaceId,
      data: opts.enabled ? { threshold: opts.threshold, credits: opts.credits } : undefined,
    });
  });
  autoTopUpPresence.invalidate(opts.workspaceId);
}

/**
 * Each workspace's threshold when its automatic top-up is on (null: off), cached per process for a short
 * time: every settlement asks, and a workspace without it must cost nothing more.
 */
export class AutoTopUpPresenceCache {
  private readonly entries = new Map<string, { thresholdMicro: number | null; at: number }>();
  constructor(private readonly ttlMs = 15_000, private readonly now: () => number = Date.now, private readonly maxEntries = 100_000) {}

  async thresholdOf(db: Knex, workspaceId: string): Promise<number | null> {
    const hit = this.entries.get(workspaceId);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.thresholdMicro;
    const row = await db('workspace_billing').where({ workspace_id: workspaceId, auto_topup_enabled: true }).whereNotNull('payment_method_id').first('auto_topup_threshold_micro');
    const thresholdMicro = row ? Number(row.auto_topup_threshold_micro) : null;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(workspaceId, { thresholdMicro, at: this.now() });
    return thresholdMicro;
  }

  invalidate(workspaceId: string): void {
    this.entries.delete(workspaceId);
  }
}

export const autoTopUpPresence = new AutoTopUpPresenceCache();

/** Whether a settlement took the workspace below its automatic top-up threshold (false when it is off). */
export async function belowAutoTopUpThreshold(db: Knex, workspaceId: string): Promise<boolean> {
  const threshold = await autoTopUpPresence.thresholdOf(db, workspaceId);
  if (threshold === null) return false;
  return (await getBalance(db, workspaceId)).totalMicro < threshold;
}

export type AutoTopUpOutcome =
  | { outcome: 'not_due' | 'already_this_period'; period: number }
  | { outcome: 'charged'; period: number; paymentId: string }
  | { outcome: 'failed'; period: number; paymentId: string; message: string };

export function autoTopUpPeriod(now: Date, periodSeconds: number): number {
  return Math.floor(now.getTime() / 1000 / periodSeconds);
}

/**
 * Charges the saved card if the balance is below the threshold and this period has no automatic top-up yet.
 * A card the bank refuses (or one that needs the person present) is a failed payment, returned as such;
 * an unreachable Stripe throws, and the retry reuses the same payment and idempotency key.
 */
export async function chargeAutoTopUp(db: Knex, stripe: StripeClient, config: PaymentsConfig, opts: { workspaceId: string; now: Date }): Promise<AutoTopUpOutcome> {
  const period = autoTopUpPeriod(opts.now, config.autoTopUpPeriodSeconds);
  const row = await settingsRow(db, opts.workspaceId);
  if (!row?.auto_topup_enabled || !row.payment_method_id || !row.stripe_customer_id) return { outcome: 'not_due', period };
  if ((await getBalance(db, opts.workspaceId)).totalMicro >= Number(row.auto_topup_threshold_micro)) return { outcome: 'not_due', period };

  const creditsMicro = Number(row.auto_topup_credits_micro);
  const credits = creditsMicro / MICRO_PER_CREDIT;
  const amount = amountMinorFor(credits, config.pricePerCreditMinor);
  const { rows: inserted } = await db.raw(
    `insert into payments (id, workspace_id, kind, credits_micro, amount_minor, currency, auto_period, created_by)
     values (?, ?, 'auto', ?, ?, ?, ?, 'system:auto-topup')
     on conflict (workspace_id, auto_period) where kind = 'auto' do nothing returning *`,
    [newId('pay'), opts.workspaceId, creditsMicro, amount, config.currency, period],
  );
  const payment = inserted[0] ?? await db('payments').where({ workspace_id: opts.workspaceId, kind: 'auto', auto_period: period }).first();
  // This period's top-up was asked for already (or refused): one charge per period, never another.
  if (!inserted[0] && (payment.payment_intent_id || payment.failed_at || payment.paid_at)) return { outcome: 'already_this_period', period };

  const metadata = { gateway_payment_id: payment.id, workspace_id: opts.workspaceId };
  try {
    const intent = await stripe.paymentIntents.create({
      amount: Number(payment.amount_minor), currency: payment.currency, customer: row.stripe_customer_id, payment_method: row.payment_method_id,
      off_session: true, confirm: true, metadata, description: `Automatic top-up: ${credits} credits`,
    }, { idempotencyKey: `auto-topup:${opts.workspaceId}:${period}` });
    const needsAction = intent.status === 'requires_action';
    await db.transaction(async (trx) => {
      await trx('payments').where({ id: payment.id }).update({
        payment_intent_id: trx.raw('coalesce(payment_intent_id, ?)', [intent.id]), updated_at: trx.fn.now(),
        ...(needsAction ? { failed_at: trx.fn.now(), failure_message: 'The bank asks for the card holder to confirm this payment: buy credits in Billing instead.' } : {}),
      });
      await audit(trx, {
        workspaceId: opts.workspaceId, actor: 'system:auto-topup', action: 'payment.auto_topup', subjectType: 'payment', subjectId: payment.id,
        data: { credits, amount: Number(payment.amount_minor), currency: payment.currency, paymentIntent: intent.id, period },
      });
    });
    if (needsAction) return { outcome: 'failed', period, paymentId: payment.id, message: 'authentication required' };
    return { outcome: 'charged', period, paymentId: payment.id };
  } catch (err) {
    if (!isStripeRefusal(err)) throw err;
    const message = (err.message || 'The card was declined.').slice(0, 500);
    await db.transaction(async (trx) => {
      await trx('payments').where({ id: payment.id }).update({ failed_at: trx.fn.now(), failure_message: message, updated_at: trx.fn.now() });
      await audit(trx, {
        workspaceId: opts.workspaceId, actor: 'system:auto-topup', action: 'payment.failed', subjectType: 'payment', subjectId: payment.id,
        data: { credits, amount: Number(payment.amount_minor), currency: payment.currency, period, message },
      });
    });
    return { outcome: 'failed', period, paymentId: payment.id, message };
  }
}

/**
 * The e-mail about a failed automatic top-up, to the workspace's owners and billing members; null when it
 * was sent already (or the payment did not fail).
 */
export async function autoTopUpFailureMail(db: Knex, paymentId: string, billingUrl: string | null): Promise<{ to: string[]; subject: string; text: string } | null> {
  const p = await getPaymentRow(db, paymentId);
  if (!p || !p.failed_at || p.paid_at) return null;
  const notified = await db('payments').where({ id: paymentId }).first('failure_notified_at');
  if (notified?.failure_notified_at) return null;
  const workspace = await db('workspaces').where({ id: p.workspace_id }).first('name');
  const people: Array<{ email: string }> = await db('members as m').join('users as u', 'u.id', 'm.user_id')
    .where('m.workspace_id', p.workspace_id).whereIn('m.role', ['owner', 'billing']).select('u.email');
  const credits = microToCredits(Number(p.credits_micro));
  return {
    to: people.map((r) => r.email),
    subject: `Automatic top-up failed for ${workspace?.name ?? p.workspace_id}`,
    text: `The automatic top-up of ${credits} credits for the workspace "${workspace?.name ?? p.workspace_id}" could not be charged:\n\n${p.failure_message ?? 'The payment failed.'}\n\n`
      + `No credits were added, and no other attempt is made before the next period. Buy credits or update the card in Billing${billingUrl ? `:\n${billingUrl}` : '.'}\n`,
  };
}

export async function markAutoTopUpFailureNotified(db: Knex, paymentId: string): Promise<void> {
  await db('payments').where({ id: paymentId }).update({ failure_notified_at: db.fn.now() });
}
