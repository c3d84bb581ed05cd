/**
 * How the simulated provider misbehaves on purpose, so retries, timeouts and fallbacks can be shown and
 * tested. Two sources: a suffix on the model's upstream id (`sim-chat-fail-429`, always) and the
 * per-request `ctx.simulate` directive (from the client's `x-simulate-failure` header, optionally only
 * for the first N attempts). Failures are the same UpstreamErrors a real upstream's answer produces,
 * built by the shared classifier in providers/http.ts.
 */
import { UpstreamError } from '../core/errors';
import { classifyHttpFailure, expectShape, parseSseJson, transportError } from '../providers/http';
import type { CallContext } from '../providers/types';

export const FAILURE_MODES = ['429', '500', '503', '400', 'timeout', 'slow', 'malformed'] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];

const SUFFIXES: Array<[string, FailureMode]> = [
  ['-fail-429', '429'], ['-fail-500', '500'], ['-fail-503', '503'], ['-fail-400', '400'], ['-fail', '500'],
  ['-timeout', 'timeout'], ['-slow', 'slow'], ['-malformed', 'malformed'],
];

export interface ModelVariant {
  /** The upstream id without its failure suffix (`sim-chat` for `sim-chat-fail-429`). */
  base: string;
  failure: FailureMode | null;
}

export function parseModelVariant(upstreamModel: string): ModelVariant {
  for (const [suffix, failure] of SUFFIXES) {
    if (upstreamModel.endsWith(suffix) && upstreamModel.length > suffix.length) return { base: upstreamModel.slice(0, -suffix.length), failure };
  }
  return { base: upstreamModel, failure: null };
}

export function isFailureMode(value: unknown): value is FailureMode {
  return typeof value === 'string' && (FAILURE_MODES as readonly string[]).includes(value);
}

/** The failure this attempt must show: the request's directive (while within `failTimes`) wins over the model suffix. */
export function activeFailure(variant: ModelVariant, ctx: CallContext): FailureMode | null {
  return directiveFailure(ctx) ?? variant.failure;
}

/** The directive's failure when it applies to this attempt (attempts are 1-based; no `failTimes` means every one). */
export function directiveFailure(ctx: CallContext): FailureMode | null {
  const directive = ctx.simulate;
  if (!directive || !isFailureMode(directive.failure)) return null;
  const attempt = directive.attempt ?? 1;
  return directive.failTimes === undefined || attempt <= directive.failTimes ? directive.failure : null;
}

export interface Timing {
  /** Deadline for one attempt when the context gives none. */
  defaultTimeoutMs: number;
  /** How long `slow` waits before answering. */
  slowDelayMs: number;
}

/** What the caller still has to do after `enact`: answer normally, or answer with garbage. */
export type Outcome = 'answer' | 'malformed';

/**
 * Plays out the failure for this attempt: throws for error statuses and timeouts, waits for `slow`, and
 * tells the caller to produce a malformed answer for `malformed`.
 */
export async function enact(provider: string, failure: FailureMode | null, ctx: CallContext, timing: Timing, model: string): Promise<Outcome> {
  switch (failure) {
    case null: return 'answer';
    case '429':
    case '500':
    case '503':
    case '400':
      throw httpFailure(provider, Number(failure), model);
    case 'timeout':
      await waitFor(Infinity, provider, ctx, timing);
      throw new Error('unreachable');
    case 'slow':
      await waitFor(ctx.simulate?.failure === 'slow' && ctx.simulate.delayMs !== undefined ? ctx.simulate.delayMs : timing.slowDelayMs, provider, ctx, timing);
      return 'answer';
    case 'malformed':
      return 'malformed';
  }
}

const ERROR_BODIES: Record<number, { message: string; type: string; code: string | null }> = {
  400: { message: 'Invalid request (simulated failure).', type: 'invalid_request_error', code: 'simulated_bad_request' },
  429: { message: 'Rate limit reached (simulated failure). Please try again in 1s.', type: 'requests', code: 'rate_limit_exceeded' },
  500: { message: 'The server had an error while processing your request (simulated failure).', type: 'server_error', code: null },
  503: { message: 'The engine is currently overloaded (simulated failure).', type: 'server_error', code: null },
};

/** The error a real upstream's HTTP answer with this status would become. */
export function httpFailure(provider: string, status: number, model: string, message?: string): UpstreamError {
  const body = ERROR_BODIES[status] ?? { message: `HTTP ${status}`, type: 'server_error', code: null };
  const headers = new Headers(status === 429 ? { 'retry-after': '1' } : {});
  const text = JSON.stringify({ error: { ...body, message: message ?? `${body.message} [model ${model}]` } });
  return classifyHttpFailure(provider, status, headers, text);
}

/** A caller mistake the simulated upstream refuses (status 400 unless given), as a real one would. */
export function rejectRequest(provider: string, model: string, message: string, status = 400): UpstreamError {
  return httpFailure(provider, status, model, message);
}

/** The error a non-streaming answer that is not the expected JSON becomes. */
export function malformedAnswer(provider: string): UpstreamError {
  try {
    expectShape(provider, false, 'the body is not the JSON the endpoint promises');
  } catch (err) {
    return err as UpstreamError;
  }
  throw new Error('unreachable');
}

/** The error a stream event that is not JSON becomes. */
export function malformedStreamEvent(provider: string): UpstreamError {
  try {
    parseSseJson(provider, '{"choices":[{"delta":');
  } catch (err) {
    return err as UpstreamError;
  }
  throw new Error('unreachable');
}

/**
 * Waits `ms` (Infinity: forever) unless the attempt's deadline or the caller's signal comes first. Past
 * the deadline, or on abort of a `timeout` wait, it throws a `timeout` UpstreamError; an abort during a
 * finite wait is a cancellation.
 */
export function waitFor(ms: number, provider: string, ctx: CallContext, timing: Timing): Promise<void> {
  const deadline = ctx.timeoutMs ?? timing.defaultTimeoutMs;
  return new Promise<void>((resolve, reject) => {
    const hangsForever = !Number.isFinite(ms);
    const cleanup = () => {
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      cleanup();
      reject(hangsForever ? transportError(provider, ctx.signal?.reason, true) : transportError(provider, ctx.signal?.reason, false, ctx.signal));
    };
    const timer = setTimeout(() => {
      cleanup();
      if (!hangsForever && ms <= deadline) resolve();
      else reject(transportError(provider, new Error('deadline'), true));
    }, Math.min(hangsForever ? deadline : ms, deadline));
    if (ctx.signal?.aborted) {
      onAbort();
      return;
    }
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A plain delay that stops with a cancellation error when the caller aborts (used between stream parts). */
export function pause(ms: number, provider: string, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 && !signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(transportError(provider, signal?.reason, false, signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}
