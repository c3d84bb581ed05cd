/**
 * Chat messages through a Slack-compatible incoming webhook: one JSON POST of `{text, blocks?}`. Anything
 * but a 2xx answer is a failed attempt (the caller retries). The URL is checked by the same rules when an
 * alert names it (`checkWebhookUrl`) and at every delivery.
 */
import { isPublicAddress } from '../ip-policy';
import { checkTargetUrl, HttpStatusError, safeFetch } from '../safe-fetch';

export interface ChatMessage {
  /** Plain-text fallback, shown in notifications. */
  text: string;
  /** Slack Block Kit blocks; receivers that do not know them show `text`. */
  blocks?: unknown[];
}

export class WebhookDeliveryError extends Error {
  constructor(message: string, readonly status: number | null) {
    super(message);
  }
}

export interface WebhookOptions {
  timeoutMs?: number;
  /**
   * Webhook URLs come from workspace admins, so by default only public addresses are reached (no aiming the
   * gateway at its own network). Local development and tests opt in to private ones.
   */
  allowPrivateAddresses?: boolean;
  /**
   * The delivery's id, the same on every attempt: sent as `X-Gateway-Delivery-Id` and `Idempotency-Key`, so
   * the receiver can drop a repeat (a retry after the sender died mid-send).
   */
  deliveryId?: string;
}

export async function postChatMessage(url: string, message: ChatMessage, opts: WebhookOptions = {}): Promise<{ status: number }> {
  try {
    await safeFetch(url, {
      post: {
        body: JSON.stringify(message),
        headers: {
          'content-type': 'application/json', 'user-agent': 'model-gateway-budget-alerts',
          ...(opts.deliveryId ? { 'x-gateway-delivery-id': opts.deliveryId, 'idempotency-key': opts.deliveryId } : {}),
        },
      },
      maxBytes: 64 * 1024,
      timeoutMs: opts.timeoutMs ?? 15_000,
      maxRedirects: 0,
      accept: () => true,
      isAllowedAddress: addressPolicy(opts),
    });
    return { status: 200 };
  } catch (err) {
    if (err instanceof HttpStatusError) throw new WebhookDeliveryError(`webhook ${err.message}`, err.status);
    throw new WebhookDeliveryError(`webhook unreachable: ${err instanceof Error ? err.message : String(err)}`, null);
  }
}

/** The URL a delivery would post to, normalised; throws the delivery's SafeFetchError when it may not be reached. */
export async function checkWebhookUrl(url: string, opts: WebhookOptions = {}): Promise<string> {
  return (await checkTargetUrl(url, { isAllowedAddress: addressPolicy(opts) })).toString();
}

function addressPolicy(opts: WebhookOptions): (address: string) => boolean {
  return opts.allowPrivateAddresses ? () => true : isPublicAddress;
}
