/**
 * Billing (roles with `billing.read` / `billing.manage`: owner and billing):
 *   GET  /v1/billing/balance      credits by source, the plan, this cycle's spend, and the top-up terms
 *   POST /v1/billing/topups       `{credits}` with a required Idempotency-Key: a Stripe Checkout Session buying
 *                                 them (its `checkout_url`); the credits arrive with Stripe's signed webhook.
 *                                 403 `payments_not_configured` without a payment processor.
 *   GET  /v1/billing/payments     the workspace's payments (Checkout and automatic), newest first
 *   GET  /v1/billing/auto-topup   the automatic top-up settings and its latest failure
 *   PUT  /v1/billing/auto-topup   `{enabled, threshold, credits}`
 *   GET  /v1/billing/ledger       the latest credit movements (grants, topups, charges, expiries), newest first;
 *                                 a request's hold with what ended it (release and charge, or refund) as one entry
 */
import Router from '@koa/router';
import { billingSummary, ledgerEntries } from '../../domain/billing-summary';
import { cycleOf } from '../../domain/billing-cycle';
import { InvalidRequestError } from '../../core/errors';
import { newId } from '../../core/ids';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';
import { canonicalJson, claimIdempotencyKey, readIdempotencyKey, sha256 } from '../../domain/idempotency';
import { checkPurchaseCredits, listPayments, paymentsNotConfigured, startCheckout, topupTerms } from '../../domain/payments';
import { autoTopUpView, setAutoTopUp } from '../../domain/auto-topup';
import { readJsonBody } from '../http/body';
import { requirePermission } from '../http/permissions';
import { validateAutoTopUpBody, validateTopupBody } from './body';

export function billingRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const actorOf = (ctx: GatewayContext) => (ctx.state.auth.via === 'session' ? `user:${ctx.state.auth.userId}` : `key:${ctx.state.auth.keyId}`);

  router.get('/billing/balance', requirePermission('billing.read'), async (ctx) => {
    const summary = await billingSummary(deps.db, { workspaceId: ctx.state.auth.workspaceId, cycle: cycleOf(new Date()) });
    ctx.body = { ...summary, topups: topupTerms(deps.config.payments) };
  });

  router.get('/billing/ledger', requirePermission('billing.read'), async (ctx) => {
    ctx.body = { object: 'list', data: await ledgerEntries(deps.db, ctx.state.auth.workspaceId) };
  });

  router.get('/billing/payments', requirePermission('billing.read'), async (ctx) => {
    ctx.body = { object: 'list', data: await listPayments(deps.db, ctx.state.auth.workspaceId) };
  });

  router.post('/billing/topups', requirePermission('billing.manage'), async (ctx) => {
    // A body no route takes (NUL, too deep, not JSON) is a 400 everywhere; a purchase needs a processor.
    const raw = await readJsonBody(ctx, deps.config.maxJsonBodyBytes);
    const payments = deps.config.payments;
    if (!payments || !deps.payments) throw paymentsNotConfigured();
    const body = validateTopupBody(raw);
    const key = readIdempotencyKey(ctx.get('idempotency-key'));
    if (!key) {
      throw new InvalidRequestError('A topup needs an Idempotency-Key header, so that a retried request starts one purchase.', {
        param: 'Idempotency-Key', code: 'missing_idempotency_key',
      });
    }
    const credits = checkPurchaseCredits(body.credits, payments);
    const { workspaceId } = ctx.state.auth;
    const claim = await claimIdempotencyKey(deps.db, { workspaceId, scope: 'billing.topups', key, bodyHash: sha256(canonicalJson(body)), prefix: 'pay', resourceId: newId('pay') });
    const payment = await startCheckout(deps.db, deps.payments.stripe, payments, {
      workspaceId, paymentId: claim.resourceId, credits, actor: actorOf(ctx), returnUrl: `${deps.publicUrl()}/settings/billing`,
    });
    if (!claim.first) ctx.set('x-idempotent-replayed', 'true');
    ctx.status = claim.first ? 201 : 200;
    ctx.body = payment;
  });

  router.get('/billing/auto-topup', requirePermission('billing.read'), async (ctx) => {
    ctx.body = await autoTopUpView(deps.db, ctx.state.auth.workspaceId);
  });

  router.put('/billing/auto-topup', requirePermission('billing.manage'), async (ctx) => {
    const raw = await readJsonBody(ctx, deps.config.maxJsonBodyBytes);
    if (!deps.config.payments) throw paymentsNotConfigured();
    const body = validateAutoTopUpBody(raw);
    await setAutoTopUp(deps.db, deps.config.payments, { workspaceId: ctx.state.auth.workspaceId, ...body, actor: actorOf(ctx) });
    ctx.body = await autoTopUpView(deps.db, ctx.state.auth.workspaceId);
  });

  return router;
}
