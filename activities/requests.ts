/**
 * Activities of the request workflow: hold credits for a model hop, call the model, close the books.
 * Each is a thin shell over domain/ and the endpoint handlers; gateway errors leave as ApplicationFailures
 * so the workflow (and then the API) sees the same error class.
 */
import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import { GatewayError, InternalError, InvalidRequestError, NotFoundError, PermissionDeniedError, UpstreamError } from '../core/errors';
import { failRequest, settleRequest, type UsageRecord } from '../domain/request-accounting';
import { refund, reserve } from '../domain/ledger';
import { toApplicationFailure } from './failures';
import type { ActivityDeps } from './deps';
import { chatCost } from '../catalog/pricing';
import { handlerFor } from '../endpoints';
import { signalBudgetWatcherQuietly } from './budget-signal';
import type { CallOutcome, Endpoint } from '../endpoints/types';
import { loadPayload, storePayload, type PayloadRef } from './request-io';
import type { SimulationDirective } from '../providers/types';

export interface HoldInput {
  endpoint: Endpoint;
  model: string;
  body: PayloadRef<unknown>;
  allowedModels: string[] | null;
  reservationId: string;
  workspaceId: string;
  apiKeyId: string | null;
  requestId: string;
}

export type HoldOutcome =
  | { ok: true; estimateMicro: number }
  | { ok: false; reason: string; error: ReturnType<GatewayError['toJSON']> };

export interface CallInput {
  endpoint: Endpoint;
  model: string;
  body: PayloadRef<unknown>;
  requestId: string;
  created: number;
  simulate?: SimulationDirective;
  /** Absent in runs started before it was passed; handlers that need it refuse then. */
  workspaceId?: string;
}

export interface CallResult extends Omit<CallOutcome, 'response'> {
  response: PayloadRef<CallOutcome['response']>;
}

/** Retry delays for one model: exponential with jitter; a Retry-After longer than this means "fall back now". */
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 4_000;
export const MAX_RETRY_AFTER_MS = 10_000;

export function retryDelayMs(attempt: number, retryAfterMs: number | null, random = Math.random): number | null {
  if (retryAfterMs !== null && retryAfterMs > MAX_RETRY_AFTER_MS) return null;
  const exponential = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
  const jittered = Math.round(exponential * (0.5 + random() * 0.5));
  return Math.max(jittered, retryAfterMs ?? 0);
}

async function asFailures<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApplicationFailure) throw err;
    if (err instanceof GatewayError) throw toApplicationFailure(err);
    throw err;
  }
}

export function createRequestActivities(deps: ActivityDeps) {
  return {
    /**
     * One hop's hold: can this model serve the request (it exists, serves this endpoint, the key may use it,
     * it takes these parameters), what does it cost at most here, and hold that. A model unfit for the
     * request is reported (the workflow skips it); a refused hold (402, cost cap) is thrown.
     */
    async holdCredits(input: HoldInput): Promise<HoldOutcome> {
      return asFailures(async () => {
        const handler = handlerFor(input.endpoint);
        let estimateMicro: number;
        try {
          const record = await deps.catalog.get(input.model);
          if (!record) throw new NotFoundError(`The model '${input.model}' does not exist.`, { code: 'model_not_found', param: 'model' });
          if (record.modality !== handler.modality) {
            throw new InvalidRequestError(`Model '${input.model}' is a ${record.modality} model and cannot serve ${input.endpoint}.`, { code: 'model_modality_mismatch', param: 'model' });
          }
          if (input.allowedModels && !input.allowedModels.includes(input.model)) {
            throw new PermissionDeniedError(`This API key may not use model '${input.model}'.`, { code: 'model_not_allowed', param: 'model' });
          }
          const body = await loadPayload(deps.storage, input.body);
          handler.check(record, body);
          estimateMicro = handler.estimate(record, body);
        } catch (err) {
          if (err instanceof GatewayError) return { ok: false, reason: err.message, error: err.toJSON() };
          throw err;
        }
        await reserve(deps.db, {
          reservationId: input.reservationId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId,
          amountMicro: estimateMicro, requestId: input.requestId, model: input.model,
        });
        return { ok: true, estimateMicro };
      });
    },

    /** A hold on its own (video jobs price their hops themselves). */
    async reserveCredits(input: { reservationId: string; workspaceId: string; apiKeyId: string | null; amountMicro: number; requestId: string; model: string }): Promise<void> {
      await asFailures(() => reserve(deps.db, input));
    },

    async releaseCredits(input: { reservationId: string; reason: string }): Promise<void> {
      await asFailures(() => refund(deps.db, input));
    },

    async callModel(input: CallInput): Promise<CallResult> {
      const attempt = activityInfo().attempt;
      try {
        const handler = handlerFor(input.endpoint);
        const record = await deps.catalog.get(input.model);
        if (!record) throw new NotFoundError(`The model '${input.model}' does not exist.`, { code: 'model_not_found', param: 'model' });
        const body = await loadPayload(deps.storage, input.body);
        const outcome = await handler.call(record, body, {
          requestId: input.requestId, created: input.created, attempt,
          simulate: input.simulate ? { ...input.simulate, attempt } : undefined,
          providers: deps.providers, storage: deps.storage, catalog: deps.catalog, workspaceId: input.workspaceId, db: deps.db,
        });
        const response = await storePayload(deps.storage, `results/${input.requestId}.json`, outcome.response);
        return { ...outcome, response };
      } catch (err) {
        if (err instanceof UpstreamError && err.retryable) {
          const delay = retryDelayMs(attempt, err.retryAfterMs);
          throw ApplicationFailure.create({
            message: err.message, type: err.name, details: [err.toJSON()],
            // A long Retry-After is not worth waiting for in a synchronous request: the next model is.
            nonRetryable: delay === null,
            nextRetryDelay: delay ?? undefined,
          });
        }
        if (err instanceof GatewayError) throw toApplicationFailure(err);
        throw toApplicationFailure(new InternalError(err instanceof Error ? err.message : String(err)));
      }
    },

    /** Settles and records the usage, then tells the workspace's budget watcher (free without alerts). */
    async settleRequest(input: { reservationId: string; chargeMicro: number; usage: UsageRecord }): Promise<{ chargedMicro: number }> {
      const settled = await asFailures(() => settleRequest(deps.db, input));
      await signalBudgetWatcherQuietly(deps, input.usage.workspaceId);
      return settled;
    },

    async failRequest(input: { reservationId: string | null; reason: string; usage: UsageRecord }): Promise<void> {
      await asFailures(() => failRequest(deps.db, input));
    },

    /** Prices token usage at a chat model (for streams whose process died before pricing them). */
    async priceChatUsage(input: { model: string; inputTokens: number; outputTokens: number }): Promise<number> {
      const record = await deps.catalog.get(input.model);
      if (!record) return 0;
      return chatCost(record, input);
    },

    /** Reads a stored response back (the API does this for offloaded results). */
    async loadResponse(ref: PayloadRef<CallOutcome['response']>): Promise<CallOutcome['response']> {
      return loadPayload(deps.storage, ref);
    },
  };
}
