/**
 * Stripe for tests: stripe-mock (Stripe's own mock of its API, built from its Go module into .cache/bin) on
 * free loopback ports, stopped by its process handle; and webhook deliveries built as Stripe sends them and
 * signed with the SDK's own test-header helper. stripe-mock keeps no state (it answers canned objects), so the
 * events are built from what the gateway recorded (the session id, the payment id it put in the metadata).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import Stripe from 'stripe';
import { loadConfig } from '../../config/env';
import { ensureGoTool, STRIPE_MOCK } from '../../stack/go-tools';
import { isPortOpen, onFreePorts, startProcess, waitUntil, type ManagedProcess } from '../../stack/processes';

export const WEBHOOK_SECRET = 'whsec_gatewaytestsecret';
export const SECRET_KEY = 'sk_test_gatewaytests';

export interface StripeMock {
  url: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

export async function startStripeMock(): Promise<StripeMock> {
  const binary = ensureGoTool(STRIPE_MOCK, loadConfig().cacheDir);
  return onFreePorts(2, async ([httpPort, httpsPort]) => {
    const proc = startProcess('stripe-mock', binary, ['-http-addr', `127.0.0.1:${httpPort}`, '-https-addr', `127.0.0.1:${httpsPort}`], {
      logFile: path.join(os.tmpdir(), `stripe-mock-${process.pid}-${httpPort}.log`),
    });
    try {
      await waitUntil('stripe-mock', () => isPortOpen('127.0.0.1', httpPort), { timeoutMs: 30_000, proc });
    } catch (err) {
      await proc.stop();
      throw err;
    }
    return { url: `http://127.0.0.1:${httpPort}`, process: proc, stop: () => proc.stop() };
  });
}

/** The gateway's payment settings against `mock` (price 1 cent a credit, 100 to 50,000 credits a purchase). */
export function paymentsEnv(mock: StripeMock, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: mock.url,
    TOPUP_PRICE_PER_CREDIT: '1', TOPUP_CURRENCY: 'usd', TOPUP_MIN_CREDITS: '100', TOPUP_MAX_CREDITS: '50000', ...extra,
  };
}

const stripe = new Stripe(SECRET_KEY);

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** An event as Stripe delivers it. */
export function stripeEvent(type: string, object: Record<string, unknown>, id = randomId('evt')): Record<string, unknown> {
  return {
    id, object: 'event', api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), livemode: false, pending_webhooks: 1,
    request: { id: null, idempotency_key: null }, type, data: { object },
  };
}

/** Posts `event` to the gateway's webhook endpoint, signed with `secret` (the right one unless told). */
export async function deliver(gatewayUrl: string, event: Record<string, unknown>, opts: { secret?: string; signature?: string | null; timestamp?: number } = {}): Promise<Response> {
  const payload = JSON.stringify(event);
  const signature = opts.signature !== undefined ? opts.signature
    : stripe.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? WEBHOOK_SECRET, timestamp: opts.timestamp });
  return fetch(`${gatewayUrl}/webhooks/stripe`, {
    method: 'POST', body: payload, headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'stripe-signature': signature }) },
  });
}

/** What the gateway recorded of a payment, from which Stripe's objects are built. */
export interface RecordedPayment {
  id: string;
  workspaceId: string;
  sessionId?: string | null;
  amount: number;
  currency?: string;
  paymentIntentId: string;
}

export const stripeObjects = {
  checkoutSession: (p: RecordedPayment, status: 'paid' | 'unpaid' = 'paid') => ({
    id: p.sessionId, object: 'checkout.session', mode: 'payment', status: 'complete', payment_status: status, amount_total: p.amount, amount_subtotal: p.amount,
    currency: p.currency ?? 'usd', customer: 'cus_test', client_reference_id: p.workspaceId, payment_intent: p.paymentIntentId,
    metadata: { gateway_payment_id: p.id, workspace_id: p.workspaceId },
  }),
  paymentIntent: (p: RecordedPayment, status: 'succeeded' | 'requires_payment_method' = 'succeeded', error?: string) => ({
    id: p.paymentIntentId, object: 'payment_intent', amount: p.amount, amount_received: status === 'succeeded' ? p.amount : 0, currency: p.currency ?? 'usd', status,
    customer: 'cus_test', payment_method: 'pm_test_card', setup_future_usage: 'off_session', latest_charge: `ch_${p.paymentIntentId.slice(3)}`,
    metadata: { gateway_payment_id: p.id, workspace_id: p.workspaceId },
    last_payment_error: error ? { code: 'card_declined', message: error, type: 'card_error' } : null,
  }),
  charge: (p: RecordedPayment, refunded = 0) => ({
    id: `ch_${p.paymentIntentId.slice(3)}`, object: 'charge', amount: p.amount, amount_captured: p.amount, amount_refunded: refunded, refunded: refunded >= p.amount,
    currency: p.currency ?? 'usd', paid: true, status: 'succeeded', payment_intent: p.paymentIntentId, payment_method: 'pm_test_card',
    payment_method_details: { type: 'card', card: { brand: 'visa', last4: '4242' } },
    receipt_url: `https://pay.stripe.com/receipts/payment/${p.paymentIntentId}`,
  }),
  dispute: (p: RecordedPayment, status: 'needs_response' | 'won' | 'lost', id = `dp_${p.paymentIntentId.slice(3)}`) => ({
    id, object: 'dispute', amount: p.amount, currency: p.currency ?? 'usd', charge: `ch_${p.paymentIntentId.slice(3)}`, payment_intent: p.paymentIntentId,
    reason: 'fraudulent', status,
  }),
};

export { randomId };
