/**
 * Activities of the request workflow: hold credits for a model hop, call the model, close the books.
 * Each is a thin shell over domain/ and the endpoint handlers; gateway errors leave as ApplicationFailures
 * so the workflow (and then the API) sees the same error class.
 */
import { activityInfo } from '@temporalio/activity';
import { GatewayError, NotFoundError } from '../core/errors';
import { eligibleModel } from '../domain/model-eligibility';
import { failRequest, settleRequest, type UsageRecord } from '../domain/request-accounting';
import { refund, reserve } from '../domain/ledger';
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

export function createRequestActivities(deps: ActivityDeps) {
  return {
    /**
     * One hop's hold: can this model serve the request (it exists, serves this endpoint, the key may use it,
     * it takes these parameters), what does it cost at most here, and hold that. A model unfit for the
     * request is reported (the workflow skips it); a refused hold (402, cost cap) is thrown.
     */
    async holdCredits(input: HoldInput): Promise<HoldOutcome> {
      const handler = handlerFor(input.endpoint);
      let estimateMicro: number;
      try {
        const record = await eligibleModel(deps.catalog, { model: input.model, modality: handler.modality, allowedModels: input.allowedModels });
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
    },

    /** A hold on its own (video jobs price their hops themselves). */
    async reserveCredits(input: { reservationId: string; workspaceId: string; apiKeyId: string | null; amountMicro: number; requestId: string; model: string }): Promise<void> {
      await reserve(deps.db, input);
    },

    async releaseCredits(input: { reservationId: string; reason: string }): Promise<void> {
      await refund(deps.db, input);
    },

    async callModel(input: CallInput): Promise<CallResult> {
      const attempt = activityInfo().attempt;
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
    },

    /** Settles and records the usage, then tells the workspace's budget watcher (free without alerts). */
    async settleRequest(input: { reservationId: string; chargeMicro: number; usage: UsageRecord }): Promise<{ chargedMicro: number }> {
      const settled = await settleRequest(deps.db, input);
      await signalBudgetWatcherQuietly(deps, input.usage.workspaceId);
      return settled;
    },

    async failRequest(input: { reservationId: string | null; reason: string; usage: UsageRecord }): Promise<void> {
      await failRequest(deps.db, input);
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
