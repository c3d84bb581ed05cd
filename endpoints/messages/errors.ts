/**
 * Errors in Anthropic's terms: its error types and the statuses its clients expect (402 billing_error for
 * credits, 529 overloaded_error when every upstream is unavailable), shared by the HTTP answer and the
 * stream's `error` event.
 */
import { UpstreamError, type GatewayError } from '../../core/errors';

export type AnthropicErrorType =
  | 'invalid_request_error' | 'authentication_error' | 'billing_error' | 'permission_error' | 'not_found_error'
  | 'request_too_large' | 'rate_limit_error' | 'api_error' | 'timeout_error' | 'overloaded_error';

export function anthropicError(err: GatewayError): { status: number; type: AnthropicErrorType } {
  // An overloaded Anthropic upstream stays overloaded for the client once retries and fallbacks are spent.
  if (err instanceof UpstreamError && err.upstreamStatus === 529) return { status: 529, type: 'overloaded_error' };
  // A model nobody can serve here waits for a provider key, not for load to pass: a 529 would be retried for ever.
  if (err.status === 503 && err.code === 'provider_not_configured') return { status: 403, type: 'permission_error' };
  switch (err.status) {
    case 400: case 405: case 409: case 421: case 422: case 501: return { status: err.status, type: 'invalid_request_error' };
    case 401: return { status: 401, type: 'authentication_error' };
    case 402: return { status: 402, type: 'billing_error' };
    case 403: return { status: 403, type: 'permission_error' };
    case 404: return { status: 404, type: 'not_found_error' };
    case 413: return { status: 413, type: 'request_too_large' };
    case 429: return { status: 429, type: 'rate_limit_error' };
    case 503: return { status: 529, type: 'overloaded_error' };
    case 504: return { status: 504, type: 'timeout_error' };
    default: return { status: err.status >= 500 ? 500 : err.status, type: err.status >= 500 ? 'api_error' : 'invalid_request_error' };
  }
}

/** `{"type": "error", "error": {"type", "message"}, "request_id"}`. */
export function anthropicErrorBody(err: GatewayError, requestId: string | null) {
  return { type: 'error', error: { type: anthropicError(err).type, message: err.message }, request_id: requestId };
}
