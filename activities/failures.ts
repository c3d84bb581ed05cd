/**
 * Gateway errors crossing the Temporal boundary. Activities throw ApplicationFailures whose type is the
 * error class name and whose first detail is its JSON; the API turns any Temporal failure chain back into
 * the gateway error it carries.
 */
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import {
  GATEWAY_ERROR_NAMES, GatewayError, gatewayErrorFromJSON, InternalError, UpstreamError, type SerializedGatewayError,
} from '../core/errors';

/** Wraps a gateway error as a failure Temporal can carry; caller errors never retry. */
export function toApplicationFailure(err: GatewayError): ApplicationFailure {
  const retryable = err instanceof UpstreamError ? err.retryable : false;
  return ApplicationFailure.create({
    message: err.message,
    type: err.name,
    nonRetryable: !retryable,
    details: [err.toJSON()],
    // Honour the upstream's Retry-After for the next attempt.
    nextRetryDelay: err instanceof UpstreamError && err.retryAfterMs ? err.retryAfterMs : undefined,
  });
}

/** Finds the gateway error inside any error or Temporal failure chain. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  let current: unknown = err;
  for (let depth = 0; current && depth < 10; depth++) {
    if (current instanceof ApplicationFailure && current.type && (GATEWAY_ERROR_NAMES as readonly string[]).includes(current.type)) {
      const detail = current.details?.[0] as SerializedGatewayError | undefined;
      if (detail && typeof detail === 'object') return gatewayErrorFromJSON(detail);
    }
    if (current instanceof TemporalFailure || current instanceof Error) {
      current = (current as { cause?: unknown }).cause;
    } else {
      break;
    }
  }
  return new InternalError(err instanceof Error ? err.message : String(err));
}
