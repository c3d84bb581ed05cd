/**
 * Chat messages through a Slack-compatible incoming webhook: one JSON POST of `{text, blocks?}`. Anything
 * but a 2xx answer is a failed attempt (the caller retries).
 */
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

export async function postChatMessage(url: string, message: ChatMessage, opts: { timeoutMs?: number } = {}): Promise<{ status: number }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'model-gateway-budget-alerts' },
      body: JSON.stringify(message),
      redirect: 'error',
      signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
    });
  } catch (err) {
    throw new WebhookDeliveryError(`webhook unreachable: ${err instanceof Error ? err.message : String(err)}`, null);
  }
  // The body is read (and dropped) so the connection can be reused.
  const body = await res.text().catch(() => '');
  if (!res.ok) throw new WebhookDeliveryError(`webhook answered ${res.status}${body ? `: ${body.slice(0, 200)}` : ''}`, res.status);
  return { status: res.status };
}
