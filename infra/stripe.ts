/**
 * The Stripe API client, built from the payments configuration: the official SDK, pointed at another
 * address when STRIPE_API_BASE says so (stripe-mock in tests). Retries of network failures reuse the
 * request's idempotency key, so a retried charge is the same charge.
 */
import Stripe from 'stripe';
import type { PaymentsConfig } from '../config/env';

export type StripeClient = InstanceType<typeof Stripe>;
export type StripeEvent = ReturnType<StripeClient['webhooks']['constructEvent']>;

export function stripeClient(config: PaymentsConfig): StripeClient {
  return new Stripe(config.secretKey, {
    maxNetworkRetries: 2,
    timeout: 30_000,
    telemetry: false,
    ...(config.apiBase ? { protocol: config.apiBase.protocol, host: config.apiBase.host, port: config.apiBase.port } : {}),
  });
}

/** A Stripe error the API answered (a declined card, an invalid request), as opposed to one of reaching it. */
export function isStripeRefusal(err: unknown): err is InstanceType<typeof Stripe.errors.StripeError> {
  return err instanceof Stripe.errors.StripeCardError || err instanceof Stripe.errors.StripeInvalidRequestError;
}

export function isSignatureError(err: unknown): boolean {
  return err instanceof Stripe.errors.StripeSignatureVerificationError;
}
