/**
 * The closed set of errors the gateway raises. Each maps to exactly one HTTP status and OpenAI's error
 * body shape; the mapping happens once, in the API's first middleware (api/middleware/errors.ts).
 * Errors cross the Temporal boundary as ApplicationFailures whose `type` is the class name and whose
 * details carry the serialized fields, so the API can rebuild the same class on the other side.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'insufficient_quota'
  | 'rate_limit_error'
  | 'upstream_error'
  | 'server_error';

export interface GatewayErrorFields {
  message: string;
  status: number;
  type: ErrorType;
  code: string | null;
  param: string | null;
  /** Extra response headers (Retry-After, rate limit headers, ...). */
  headers: Record<string, string>;
}

export abstract class GatewayError extends Error {
  abstract readonly status: number;
  abstract readonly type: ErrorType;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(message: string, opts: { code?: string | null; param?: string | null; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = new.target.name;
    this.code = opts.code ?? null;
    this.param = opts.param ?? null;
    this.headers = opts.headers ?? {};
  }

  /** Whether trying the same step again may succeed (transient upstream failures; our own stores' hiccups). */
  get retryable(): boolean {
    return false;
  }

  /** Whether the next model of a fallback chain may serve what this one could not (never for caller errors). */
  get fallsBack(): boolean {
    return false;
  }

  toJSON(): GatewayErrorFields & { name: string; retryable: boolean; fallsBack: boolean } {
    return {
      name: this.name,
      retryable: this.retryable,
      fallsBack: this.fallsBack,
      message: this.message,
      status: this.status,
      type: this.type,
      code: this.code,
      param: this.param,
      headers: this.headers,
    };
  }
}

/** 400: the request is malformed or names something the model does not take. */
export class InvalidRequestError extends GatewayError {
  readonly status = 400;
  readonly type = 'invalid_request_error' as const;
}

/** 401: missing, unknown or revoked API key. */
export class AuthenticationError extends GatewayError {
  readonly status = 401;
  readonly type = 'authentication_error' as const;
  constructor(message: string, opts: { code?: string } = {}) {
    super(message, { code: opts.code ?? 'invalid_api_key' });
  }
}

/** 403: the key may not do this (model not allowed, cost cap, role). */
export class PermissionDeniedError extends GatewayError {
  readonly status = 403;
  readonly type = 'permission_error' as const;
}

/** 404: missing resource; also used for other workspaces' resources so existence is never revealed. */
export class NotFoundError extends GatewayError {
  readonly status = 404;
  readonly type = 'not_found_error' as const;
}

/** 405 (501 for a method the server does not know): the path exists, but not for this method. */
export class MethodNotAllowedError extends GatewayError {
  readonly status: 405 | 501;
  readonly type = 'invalid_request_error' as const;
  constructor(message: string, opts: { allow?: string; status?: 405 | 501 } = {}) {
    super(message, { code: 'method_not_allowed', headers: opts.allow ? { allow: opts.allow } : {} });
    this.status = opts.status ?? 405;
  }
}

/**
 * 421: the request names a host this server does not answer for (its `Host` is not an allowed name), as a
 * page that rebound its own DNS name to the gateway's address would. Raised before anything else is read.
 */
export class MisdirectedRequestError extends GatewayError {
  readonly status = 421;
  readonly type = 'invalid_request_error' as const;
}

/** 409 or 422: the request conflicts with earlier state (an idempotency key reused with another body). */
export class ConflictError extends GatewayError {
  readonly type = 'conflict_error' as const;
  readonly status: 409 | 422;
  constructor(message: string, opts: { code?: string; param?: string; status?: 409 | 422 } = {}) {
    super(message, opts);
    this.status = opts.status ?? 409;
  }
}

/** 413: body or upload larger than allowed; raised before the body is read whole. */
export class PayloadTooLargeError extends GatewayError {
  readonly status = 413;
  readonly type = 'invalid_request_error' as const;
}

/** 402: the workspace cannot cover the reservation. */
export class InsufficientCreditsError extends GatewayError {
  readonly status = 402;
  readonly type = 'insufficient_quota' as const;
  constructor(message = 'Insufficient credits: the workspace balance cannot cover this request. Top up to continue.', opts: { code?: string } = {}) {
    super(message, { code: opts.code ?? 'insufficient_credits' });
  }
}

/** 429 raised by the gateway's own limits (per-key quotas, per-IP safety net). */
export class RateLimitError extends GatewayError {
  readonly status = 429;
  readonly type = 'rate_limit_error' as const;
  constructor(message: string, opts: { retryAfterSeconds: number; headers?: Record<string, string>; shouldRetry?: boolean; code?: string }) {
    const headers: Record<string, string> = { 'retry-after': String(Math.max(1, Math.ceil(opts.retryAfterSeconds))), ...(opts.headers ?? {}) };
    if (opts.shouldRetry === false) headers['x-should-retry'] = 'false';
    super(message, { code: opts.code ?? 'rate_limit_exceeded', headers });
  }
}

export type UpstreamFailureKind = 'rate_limited' | 'server_error' | 'timeout' | 'network' | 'bad_response' | 'caller_error' | 'not_configured';

/**
 * A provider call failed. `retryable` decides both Temporal's retry policy and whether a fallback hop may
 * run (caller errors never fall back). `status` is what the client sees once the chain is exhausted.
 */
const TRANSIENT_UPSTREAM_KINDS: ReadonlySet<UpstreamFailureKind> = new Set(['rate_limited', 'server_error', 'timeout', 'network']);

export class UpstreamError extends GatewayError {
  readonly type: ErrorType;
  readonly status: number;
  readonly kind: UpstreamFailureKind;
  readonly retryAfterMs: number | null;
  readonly provider: string;
  readonly upstreamStatus: number | null;

  constructor(message: string, opts: {
    kind: UpstreamFailureKind;
    provider: string;
    upstreamStatus?: number | null;
    retryAfterMs?: number | null;
    code?: string | null;
    param?: string | null;
  }) {
    const retryAfterMs = opts.retryAfterMs ?? null;
    const headers: Record<string, string> = {};
    if (retryAfterMs !== null && opts.kind === 'rate_limited') headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
    super(message, { code: opts.code ?? defaultUpstreamCode(opts.kind), param: opts.param ?? null, headers });
    this.kind = opts.kind;
    this.provider = opts.provider;
    this.upstreamStatus = opts.upstreamStatus ?? null;
    this.retryAfterMs = retryAfterMs;
    this.status = upstreamClientStatus(opts.kind, this.upstreamStatus);
    this.type = opts.kind === 'caller_error' ? 'invalid_request_error' : opts.kind === 'rate_limited' ? 'rate_limit_error' : 'upstream_error';
  }

  /** Throttling, 5xx, timeouts and unreachable hosts are transient: retried, then the chain falls back. */
  override get retryable(): boolean {
    return TRANSIENT_UPSTREAM_KINDS.has(this.kind);
  }

  override get fallsBack(): boolean {
    return this.retryable;
  }

  override toJSON() {
    return { ...super.toJSON(), kind: this.kind, provider: this.provider, upstreamStatus: this.upstreamStatus, retryAfterMs: this.retryAfterMs };
  }
}

function defaultUpstreamCode(kind: UpstreamFailureKind): string {
  switch (kind) {
    case 'rate_limited': return 'upstream_rate_limited';
    case 'server_error': return 'upstream_error';
    case 'timeout': return 'upstream_timeout';
    case 'network': return 'upstream_unreachable';
    case 'bad_response': return 'upstream_bad_response';
    case 'caller_error': return 'upstream_rejected_request';
    case 'not_configured': return 'provider_not_configured';
  }
}

function upstreamClientStatus(kind: UpstreamFailureKind, upstreamStatus: number | null): number {
  switch (kind) {
    case 'rate_limited': return 429;
    case 'timeout': return 504;
    case 'network': return 502;
    case 'bad_response': return 502;
    case 'not_configured': return 503;
    case 'server_error': return upstreamStatus === 503 ? 503 : upstreamStatus === 504 ? 504 : 502;
    case 'caller_error': {
      // Pass the provider's 4xx through where it is meaningful to the caller; never echo auth failures
      // of our own provider credentials as the caller's 401/403.
      if (upstreamStatus === 401 || upstreamStatus === 403) return 502;
      if (upstreamStatus === 413 || upstreamStatus === 422 || upstreamStatus === 404) return upstreamStatus;
      return 400;
    }
  }
}

/** 500: a bug or an unexpected state; the message given to the client is generic. */
export class InternalError extends GatewayError {
  readonly status = 500;
  readonly type = 'server_error' as const;
  private readonly transient: boolean;

  /** `transient`: an unexpected failure of our own (a store's hiccup), worth retrying; a known dead end is not. */
  constructor(message: string, opts: { code?: string | null; transient?: boolean } = {}) {
    super(message, { code: opts.code ?? null });
    this.transient = opts.transient ?? false;
  }

  override get retryable(): boolean {
    return this.transient;
  }
}

/**
 * 503 or 504: a part the gateway depends on (database, workflow service, object storage) is unreachable, or
 * a request's outcome is not known yet. Never a verdict on the request itself: Retry-After says when to ask
 * again, and the code says what to do (`outcome_unknown`: fetch the outcome, do not send it again as new).
 */
export class ServiceUnavailableError extends GatewayError {
  readonly status: 503 | 504;
  readonly type = 'server_error' as const;
  private readonly transient: boolean;

  /** `transient`: an outage of one of our own stores, which a step retried a moment later may outlive. */
  constructor(message: string, opts: { code: string; status?: 503 | 504; retryAfterSeconds?: number; transient?: boolean }) {
    super(message, { code: opts.code, headers: { 'retry-after': String(Math.max(1, Math.ceil(opts.retryAfterSeconds ?? 5))) } });
    this.status = opts.status ?? 503;
    this.transient = opts.transient ?? false;
  }

  override get retryable(): boolean {
    return this.transient;
  }
}

export type SerializedGatewayError = ReturnType<GatewayError['toJSON']> & {
  kind?: UpstreamFailureKind;
  provider?: string;
  upstreamStatus?: number | null;
  retryAfterMs?: number | null;
};

/** Rebuilds a GatewayError from its JSON form (used when it comes back through a Temporal failure). */
export function gatewayErrorFromJSON(json: SerializedGatewayError): GatewayError {
  const opts = { code: json.code ?? undefined, param: json.param ?? undefined, headers: json.headers };
  switch (json.name) {
    case 'InvalidRequestError': return new InvalidRequestError(json.message, opts);
    case 'AuthenticationError': return new AuthenticationError(json.message, { code: json.code ?? undefined });
    case 'PermissionDeniedError': return new PermissionDeniedError(json.message, opts);
    case 'NotFoundError': return new NotFoundError(json.message, opts);
    case 'ConflictError': return new ConflictError(json.message, { ...opts, status: json.status === 422 ? 422 : 409 });
    case 'PayloadTooLargeError': return new PayloadTooLargeError(json.message, opts);
    case 'MisdirectedRequestError': return new MisdirectedRequestError(json.message, opts);
    case 'InsufficientCreditsError': return new InsufficientCreditsError(json.message, { code: json.code ?? undefined });
    case 'RateLimitError': {
      const retryAfter = Number(json.headers?.['retry-after'] ?? 1);
      const { ['retry-after']: _drop, ...rest } = json.headers ?? {};
      return new RateLimitError(json.message, { retryAfterSeconds: retryAfter, headers: rest, code: json.code ?? undefined });
    }
    case 'UpstreamError':
      return new UpstreamError(json.message, {
        kind: json.kind ?? 'server_error',
        provider: json.provider ?? 'unknown',
        upstreamStatus: json.upstreamStatus ?? null,
        retryAfterMs: json.retryAfterMs ?? null,
        code: json.code,
        param: json.param,
      });
    case 'ServiceUnavailableError':
      return new ServiceUnavailableError(json.message, {
        code: json.code ?? 'service_unavailable', status: json.status === 504 ? 504 : 503,
        retryAfterSeconds: Number(json.headers?.['retry-after'] ?? 5), transient: json.retryable === true,
      });
    default:
      return new InternalError(json.message, { code: json.code, transient: json.retryable === true });
  }
}

export const GATEWAY_ERROR_NAMES = [
  'InvalidRequestError', 'AuthenticationError', 'PermissionDeniedError', 'NotFoundError', 'ConflictError',
  'PayloadTooLargeError', 'MisdirectedRequestError', 'InsufficientCreditsError', 'RateLimitError', 'UpstreamError', 'InternalError',
  'ServiceUnavailableError',
] as const;

export function isGatewayError(err: unknown): err is GatewayError {
  return err instanceof GatewayError;
}
