/**
 * `POST /webhooks/stripe`: Stripe's deliveries. The signature (`Stripe-Signature`, HMAC of the raw body
 * under STRIPE_WEBHOOK_SECRET, with a timestamp at most 5 minutes old) is checked on the bytes as they came,
 * before anything is parsed; a missing or wrong one is a 400 and changes nothing. A verified event is
 * applied once by its id (domain/payments.ts); a replay answers 200 and changes nothing. Outside /v1: Stripe
 * has no API key, its signature is its credential.
 */
import Router from '@koa/router';
import { InvalidRequestError } from '../../core/errors';
import { isSignatureError, type StripeEvent } from '../../infra/stripe';
import { applyStripeEvent, paymentsNotConfigured } from '../../domain/payments';
import { signalAutoTopUp } from '../../activities/auto-topup-signal';
import { readRawBody } from '../http/body';
import type { AppDeps, GatewayState } from '../http/context';

/** Stripe's events are small; anything far larger is not one. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;

export function stripeWebhookRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/webhooks/stripe', async (ctx) => {
    const payments = deps.config.payments;
    if (!payments || !deps.payments) throw paymentsNotConfigured();
    const raw = await readRawBody(ctx, WEBHOOK_BODY_LIMIT);
    const signature = ctx.get('stripe-signature');
    if (!signature) throw new InvalidRequestError('A Stripe webhook needs its Stripe-Signature header.', { code: 'missing_signature', param: 'Stripe-Signature' });
    let event: StripeEvent;
    try {
      event = deps.payments.stripe.webhooks.constructEvent(raw, signature, payments.webhookSecret);
    } catch (err) {
      if (!isSignatureError(err)) throw err;
      throw new InvalidRequestError('The Stripe-Signature does not match this body (or is too old).', { code: 'invalid_signature', param: 'Stripe-Signature' });
    }
    const result = await applyStripeEvent(deps.db, event);
    if (result.autoTopUpFailed && result.workspaceId && result.paymentId) {
      try {
        await signalAutoTopUp(deps.temporal.client, { taskQueue: deps.temporal.taskQueue, workspaceId: result.workspaceId, failed: { paymentId: result.paymentId } });
      } catch (err) {
        // The failure is recorded and shown in Billing; only its e-mail waits for the next signal.
        deps.log.warn({ err, paymentId: result.paymentId }, 'could not signal the automatic top-up about a failed payment');
      }
    }
    ctx.body = { received: true, id: event.id, outcome: result.outcome };
  });
  return router;
}
