/**
 * Errors that say a part the gateway depends on is down, not that the request is wrong or failed: a lost
 * Postgres connection (refused, terminated, a database refusing connections, an exhausted pool), the
 * Temporal service unreachable or not answering, an unreachable object store. They become 503 with
 * Retry-After instead of a 500: in the API (api/http/errors.ts) and at the activity boundary
 * (activities/failures.ts), where an outage that outlasts the activity's retries reaches the client the same way.
 */
import { ServiceUnavailableError } from './errors';

/** Postgres SQLSTATEs of a connection that is gone or refused (classes 08 and 57P, too many connections). */
const POSTGRES_UNAVAILABLE = /^(08...|57P0[1-3]|53300)$/;
/** gRPC status codes of a Temporal service that cannot be reached or did not answer in time. */
const GRPC_UNAVAILABLE = new Set([4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);
/** Socket errors of a peer that is down or unreachable. */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

type Part = 'database' | 'temporal' | 'service';

function failingPart(err: unknown): Part | null {
  let socketError = false;
  for (let current = err, depth = 0; current && typeof current === 'object' && depth < 8; depth++) {
    const e = current as { name?: string; code?: unknown; message?: string; details?: unknown; metadata?: unknown; cause?: unknown };
    const message = typeof e.message === 'string' ? e.message : '';
    if (e.name === 'KnexTimeoutError' || /^Connection terminated|not currently accepting connections|the database system is (starting up|shutting down)/.test(message)) return 'database';
    if (typeof e.code === 'string' && POSTGRES_UNAVAILABLE.test(e.code)) return 'database';
    if (typeof e.code === 'number' && GRPC_UNAVAILABLE.has(e.code) && (typeof e.details === 'string' || e.name === 'ServiceError')) return 'temporal';
    if (e.name === 'ServiceError' || e.name === 'TransportError' || /tcp connect error|transport error|Service unavailable/i.test(message)) return 'temporal';
    if (typeof e.code === 'string' && SOCKET_ERRORS.has(e.code)) socketError = true;
    current = e.cause;
  }
  return socketError ? 'service' : null;
}

const MESSAGES: Record<Part, string> = {
  database: 'The gateway\'s database is unavailable right now. Retry after the Retry-After delay; quote the x-request-id if it persists.',
  temporal: 'The gateway\'s workflow service is unavailable right now. Retry after the Retry-After delay; quote the x-request-id if it persists.',
  service: 'A service the gateway depends on is unavailable right now. Retry after the Retry-After delay; quote the x-request-id if it persists.',
};

/** The 503 an outage of one of our own dependencies deserves, or null for any other error. */
export function outageError(err: unknown): ServiceUnavailableError | null {
  const part = failingPart(err);
  if (!part) return null;
  return new ServiceUnavailableError(MESSAGES[part], { code: `${part}_unavailable`, retryAfterSeconds: 5, transient: true });
}
