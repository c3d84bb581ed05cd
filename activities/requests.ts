/**
 * Activities of the request workflow: one hop (hold credits, call the model, settle: activities/hop.ts),
 * and the ledger steps the workflow takes itself (give a hold back, settle what a hop could not, record a
 * failure). Each is a thin shell over domain/ and the endpoint handlers; gateway errors leave as
 * ApplicationFailures so the workflow (and then the API) sees the same error class.
 */
import { activityInfo, Context } from '@temporalio/activity';
import { GatewayError, InsufficientCreditsError, NotFoundError, PermissionDeniedError } from '../core/errors';
import { eligibleModel } from '../domain/model-eligibility';
import { failRequest, findSettledHop, type SettledHop, type UsageRecord } from '../domain/request-accounting';
import { refund, reserve } from '../domain/ledger';
import type { ActivityDeps } from './deps';
import { batchCharge, chatCost } from '../catalog/pricing';
import { handlerFor } from '../endpoints';
import { settleAndSignal } from './budget-signal';
import type { CallOutcome, Endpoint } from '../endpoints/types';
import { loadPayload, storePayload, type PayloadRef } from './request-io';
import type { SimulationDirective } from '../providers/types';
import { LEDGER_PATIENCE_MS, patiently, serveHop, type HoldAnswer, type HoldInput, type HopCalled, type HopDenied, type HopHold, type HopSettlement } from './hop';
import type { FirstHop, FirstHops } from './first-hop';
import { RunWatch } from './run-watch';
import { readStreamProgress, type StreamProgressRecord } from '../domain/stream-progress';

/** One hop of a plain request: its call, who holds, and how to settle it. */
export interface ServeHopInput extends CallInput {
  hold: HopHold;
  settlement: HopSettlement;
}

export type ServeHopResult = HopCalled<CallResult> | HopDenied;

export interface CallInput {
  endpoint: Endpoint;
  model: string;
  body: PayloadRef<unknown>;
  requestId: string;
  created: number;
  simulate?: SimulationDirective;
  /** Absent in runs started before it was passed; handlers that need it refuse then. */
  workspaceId?: string;
  /** A line of a batch: charged at the model's batch price (catalog/pricing.ts `batchCharge`). */
  batch?: boolean;
}

export interface CallResult extends Omit<CallOutcome, 'response'> {
  response: PayloadRef<CallOutcome['response']>;
}

/** What the caller of a plain request gets: the answer, and what its headers say (model, fallback, charge). */
export interface RequestAnswer {
  response: CallResult['response'];
  modelUsed: string;
  fallbackFrom: string | null;
  fallbackDepth: number;
  creditsUsedMicro: number;
}

/**
 * One hop's hold: can this model serve the request (it exists, serves this endpoint, the key may use it,
 * it takes these parameters), what does it cost at most here, and hold that. A model unfit for the request,
 * and a hold the balance or the key's cost cap refuses, are answers (nothing is held); the reservation
 * comes back as it stands (a retry finds the hold it took before).
 */
export async function holdCredits(deps: ActivityDeps, input: HoldInput): Promise<HoldAnswer> {
  const handler = handlerFor(input.endpoint);
  let estimateMicro: number;
  try {
    const record = await eligibleModel(deps.catalog, { model: input.model, modality: handler.modality, allowedModels: input.allowedModels });
    const body = await loadPayload(deps.storage, input.body);
    handler.check(record, body);
    estimateMicro = handler.estimate(record, body);
  } catch (err) {
    if (err instanceof GatewayError) return { ok: false, reason: err.message, error: err.toJSON(), endsChain: false };
    throw err;
  }
  try {
    const reservation = await patiently(() => reserve(deps.db, {
      reservationId: input.reservationId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId,
      amountMicro: estimateMicro, requestId: input.requestId, model: input.model,
    }), { patienceMs: LEDGER_PATIENCE_MS });
    return { ok: true, estimateMicro, status: reservation.status, requestId: reservation.requestId, chargedMicro: reservation.chargedMicro };
  } catch (err) {
    // The balance or the key's cap: no later model of the chain would be held either.
    if (err instanceof InsufficientCreditsError || err instanceof PermissionDeniedError) return { ok: false, reason: err.message, error: err.toJSON(), endsChain: true };
    throw err;
  }
}

/**
 * Calls one hop's model; its response is stored when too large for the history. `attempt` is the running
 * activity's (a first hop begun before its activity is attempt 1).
 */
export async function callModel(deps: ActivityDeps, input: CallInput, opts: { attempt?: number; signal?: AbortSignal } = {}): Promise<CallResult> {
  const attempt = opts.attempt ?? activityInfo().attempt;
  const handler = handlerFor(input.endpoint);
  const record = await deps.catalog.get(input.model);
  if (!record) throw new NotFoundError(`The model '${input.model}' does not exist.`, { code: 'model_not_found', param: 'model' });
  const body = await loadPayload(deps.storage, input.body);
  const outcome = await handler.call(record, body, {
    requestId: input.requestId, created: input.created, attempt, signal: opts.signal,
    simulate: input.simulate ? { ...input.simulate, attempt } : undefined,
    providers: deps.providers, storage: deps.storage, catalog: deps.catalog, workspaceId: input.workspaceId, db: deps.db,
  });
  const response = await storePayload(deps.storage, `results/${input.requestId}.json`, outcome.response);
  return { ...outcome, chargeMicro: input.batch ? batchCharge(record, outcome.chargeMicro) : outcome.chargeMicro, response };
}

/** The usage record of a hop that served, from its settlement's fixed fields and what the call used. */
export function servedUsage(settlement: HopSettlement, called: Pick<CallResult, 'usage'>, status: UsageRecord['status'] = 'succeeded', errorCode: string | null = null): UsageRecord {
  return {
    ...settlement.usage, status, errorCode,
    inputTokens: called.usage.inputTokens, outputTokens: called.usage.outputTokens, units: called.usage.units,
    latencyMs: Date.now() - settlement.startedAt,
  };
}

/** One plain hop's steps (the image stream wraps the call in its progress reports). */
export function hopSteps(deps: ActivityDeps, input: ServeHopInput, call: () => Promise<CallResult> = () => callModel(deps, input)) {
  return {
    hold: () => holdCredits(deps, { ...input.hold, endpoint: input.endpoint, model: input.model, body: input.body, requestId: input.requestId }),
    call,
    settle: (called: CallResult) => settleAndSignal(deps, {
      reservationId: input.settlement.reservationId, chargeMicro: called.chargeMicro, usage: servedUsage(input.settlement, called),
    }),
  };
}

/**
 * A hop that served and settled is its request's answer: the walk along the chain ends there, with this
 * model, this fallback depth and this charge. Null for a hop that did not serve, or could not settle (the
 * run settles and answers then).
 */
export function answerOfHop(input: ServeHopInput, outcome: ServeHopResult): RequestAnswer | null {
  if ('denied' in outcome || outcome.settledMicro === null) return null;
  const { modelRequested, fallbackDepth } = input.settlement.usage;
  return { response: outcome.response, modelUsed: input.model, fallbackFrom: fallbackDepth > 0 ? modelRequested : null, fallbackDepth, creditsUsedMicro: outcome.settledMicro };
}

/**
 * Hands a hop's answer to an API waiting in this process at once, instead of after the workflow task
 * completes: the money is recorded, and the answer is the one the run returns.
 */
export function handOverAnswer(deps: Pick<ActivityDeps, 'results'>, input: ServeHopInput, outcome: ServeHopResult): void {
  const workflowId = activityInfo().workflowExecution?.workflowId;
  const answer = answerOfHop(input, outcome);
  if (deps.results && workflowId && answer) deps.results.deliver(workflowId, answer);
}

/**
 * Begins a plain request's first hop while its run starts (activities/first-hop.ts): hold and call now,
 * settle once the run is confirmed here or its hop activity claims the hop.
 */
export function beginPlainHop(deps: ActivityDeps & { firstHops: FirstHops }, input: ServeHopInput): FirstHop<ServeHopResult, null> {
  return deps.firstHops.begin(input.hold.reservationId, input.model, 'serveHop', null, ({ gate, signal }) => serveHop(input, {
    ...hopSteps(deps, input, () => callModel(deps, input, { attempt: 1, signal })),
    beforeSettle: gate,
  }));
}

export function createRequestActivities(deps: ActivityDeps) {
  return {
    /**
     * One hop: hold, call, settle (activities/hop.ts), or the outcome of the same hop begun in this process
     * while the run started (activities/first-hop.ts). Its marker in the history shows the model, the
     * outcome and the charge.
     */
    async serveHop(input: ServeHopInput): Promise<ServeHopResult> {
      // A run cancelled, terminated or timed out while its hop calls stops the call, and settles nothing (activities/run-watch.ts).
      const watch = new RunWatch(Context.current());
      return watch.guard(async () => {
        const begun = deps.firstHops?.claim<ServeHopResult, null>(input.hold.reservationId, input.model);
        // A run that ended while its first hop still calls stops that hop, as it would stop its own call.
        if (begun) watch.signal.addEventListener('abort', () => begun.stop('its run ended'), { once: true });
        const outcome = begun ? await begun.outcome : await serveHop(input, {
          ...hopSteps(deps, input, () => callModel(deps, input, { signal: watch.signal })),
          beforeSettle: () => watch.ensureRunning(),
        });
        handOverAnswer(deps, input, outcome);
        return outcome;
      });
    },

    /** A hold on its own (video jobs price their hops themselves). */
    async reserveCredits(input: { reservationId: string; workspaceId: string; apiKeyId: string | null; amountMicro: number; requestId: string; model: string }): Promise<void> {
      await reserve(deps.db, input);
    },

    async releaseCredits(input: { reservationId: string; reason: string }): Promise<void> {
      await refund(deps.db, input);
    },

    /** Settles a hop its activity could not (a database outage outlasted its patience). */
    async settleRequest(input: { reservationId: string; chargeMicro: number; usage: UsageRecord }): Promise<{ chargedMicro: number }> {
      return settleAndSignal(deps, input);
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

    /** What a stream served as a local activity last wrote of its progress (its process died mid-stream); null if nothing. */
    async streamProgress(input: { reservationId: string }): Promise<StreamProgressRecord | null> {
      return readStreamProgress(deps.db, input.reservationId);
    },

    /** How a hop's reservation was settled, if it was (a stream that settled itself before its process stopped answering). */
    async settledHop(input: { reservationId: string }): Promise<SettledHop | null> {
      return findSettledHop(deps.db, input.reservationId);
    },

    /** Reads a stored response back (the API does this for offloaded results). */
    async loadResponse(ref: PayloadRef<CallOutcome['response']>): Promise<CallOutcome['response']> {
      return loadPayload(deps.storage, ref);
    },
  };
}
