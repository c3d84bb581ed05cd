/**
 * Steps shared by the request workflows: the ledger's local activities, holding credits for one hop of the
 * fallback chain, deciding whether a failure may fall back, and closing the books of a request no model
 * could serve.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { GatewayActivities } from '../activities';
import type { Endpoint } from '../endpoints/types';
import type { PayloadRef } from '../activities/request-io';
import type { CallResult } from '../activities/requests';
import type { SimulationDirective } from '../providers/types';

const LEDGER_OPTIONS = {
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumInterval: '2 seconds', maximumAttempts: 10 },
} as const;

const MODEL_CALL_OPTIONS = {
  // One attempt's ceiling; the provider's own deadline is shorter.
  startToCloseTimeout: '10 minutes',
  // The activity sets each retry's delay (exponential with jitter, or the upstream's Retry-After).
  retry: { initialInterval: '250 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
} as const;

/**
 * Ledger steps and model calls run as local activities: in-process, no task round trips through the
 * server, and (with eager start) the whole request in one workflow task. `remote` runs them as ordinary
 * activities instead; the benchmark compares the two.
 */
export type ActivityMode = 'local' | 'remote';

const local = {
  ledger: proxyLocalActivities<GatewayActivities>(LEDGER_OPTIONS),
  models: proxyLocalActivities<GatewayActivities>(MODEL_CALL_OPTIONS),
};
const remote = {
  ledger: proxyActivities<GatewayActivities>(LEDGER_OPTIONS),
  models: proxyActivities<GatewayActivities>(MODEL_CALL_OPTIONS),
};

export function activitiesFor(input: { activityMode?: ActivityMode }) {
  return input.activityMode === 'remote' ? remote : local;
}

/** The ledger's local activities (for workflows that do not switch modes). */
export const ledger = local.ledger;

export interface ModelRequestInput {
  requestId: string;
  workspaceId: string;
  apiKeyId: string | null;
  endpoint: Endpoint;
  /** [requested model, ...its fallback chain]. */
  chain: string[];
  allowedModels: string[] | null;
  body: PayloadRef<unknown>;
  /** Unix seconds the API accepted the request. */
  created: number;
  clientRequestId?: string | null;
  simulate?: SimulationDirective;
  activityMode?: ActivityMode;
}

export interface HopRecord {
  model: string;
  outcome: 'served' | 'skipped' | 'failed';
  reason?: string;
}

interface SerializedError { name: string; kind?: string; message: string; code?: string | null }

/** The serialized gateway error an activity failure carries, if any. */
export function gatewayErrorOf(err: unknown): SerializedError | null {
  let current: unknown = err;
  while (current instanceof ActivityFailure) current = current.cause;
  if (current instanceof ApplicationFailure) {
    const detail = current.details?.[0] as { name?: string } | undefined;
    if (detail && typeof detail === 'object' && typeof detail.name === 'string') return detail as SerializedError;
  }
  return null;
}

const FALLBACK_KINDS = new Set(['rate_limited', 'server_error', 'timeout', 'network']);

/** Throttling, 5xx and timeouts fall back to the next model; caller errors never do. */
export function mayFallBack(err: unknown): boolean {
  const error = gatewayErrorOf(err);
  return Boolean(error && error.name === 'UpstreamError' && error.kind && FALLBACK_KINDS.has(error.kind));
}

export function usageBase(input: ModelRequestInput) {
  return {
    requestId: input.requestId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId, endpoint: input.endpoint,
    modelRequested: input.chain[0], clientRequestId: input.clientRequestId ?? null,
  };
}

/**
 * Prices the request at this hop's model, re-checks what the key may use and holds the credits. Returns the
 * reservation id, or null when this hop is skipped (`stop` when the chain must end). At the first hop
 * every refusal is the client's answer and is thrown.
 */
export async function holdForHop(input: ModelRequestInput, depth: number, hops: HopRecord[]): Promise<string | null | 'stop'> {
  const model = input.chain[depth];
  const reservationId = `${workflowInfo().workflowId}:${depth}`;
  let hold;
  try {
    hold = await activitiesFor(input).ledger.holdCredits({
      endpoint: input.endpoint, model, body: input.body, allowedModels: input.allowedModels,
      reservationId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId, requestId: input.requestId,
    });
  } catch (err) {
    // The requested model's refusal (402, cost cap) is the client's answer; a fallback's ends the chain.
    if (depth === 0) throw err;
    hops.push({ model, outcome: 'skipped', reason: gatewayErrorOf(err)?.message ?? 'credits could not be reserved' });
    return 'stop';
  }
  if (!hold.ok) {
    if (depth === 0) throw ApplicationFailure.create({ message: hold.error.message, type: hold.error.name, nonRetryable: true, details: [hold.error] });
    hops.push({ model, outcome: 'skipped', reason: hold.reason });
    return null;
  }
  return reservationId;
}

/** Records a request no model served and fails the run with the last upstream error. */
export async function failExhausted(input: ModelRequestInput, hops: HopRecord[], lastFailure: unknown, startedAt: number): Promise<never> {
  const error = gatewayErrorOf(lastFailure);
  await activitiesFor(input).ledger.failRequest({
    reservationId: null,
    reason: error?.message ?? 'no model could serve the request',
    usage: {
      ...usageBase(input), modelUsed: null, fallbackDepth: Math.max(0, hops.length - 1), status: 'failed',
      inputTokens: 0, outputTokens: 0, errorCode: error?.code ?? null, latencyMs: Date.now() - startedAt,
    },
  });
  if (lastFailure) throw lastFailure;
  const message = 'No model in the fallback chain could serve this request.';
  throw ApplicationFailure.create({
    message, type: 'InvalidRequestError', nonRetryable: true,
    details: [{ name: 'InvalidRequestError', message, status: 400, type: 'invalid_request_error', code: 'no_model_available', param: 'model', headers: {} }],
  });
}

export interface ModelRequestResult {
  response: CallResult['response'];
  modelUsed: string;
  fallbackFrom: string | null;
  fallbackDepth: number;
  creditsUsedMicro: number;
  hops: HopRecord[];
}

export interface ChainCall {
  /** Calls one hop's model (a local activity, or an activity in the API process holding a stream). */
  call(model: string, depth: number): Promise<CallResult>;
  /**
   * A failure that must end the request at once (after its own bookkeeping), instead of falling back or
   * being reported as the chain's last error. Returns true when it handled the failure.
   */
  abandonOn?(err: unknown, reservationId: string, depth: number): Promise<boolean>;
}

/**
 * The request's walk along [requested, ...fallback chain]: hold credits for a hop, call its model, and on
 * throttling, 5xx or timeouts give the hold back and try the next; settle the first answer at its exact
 * price (with its usage record). A chain no model served ends with the last upstream error.
 */
export async function serveAlongChain(input: ModelRequestInput, chain: ChainCall): Promise<ModelRequestResult> {
  const { ledger } = activitiesFor(input);
  const startedAt = Date.now();
  const hops: HopRecord[] = [];
  let lastFailure: unknown = null;

  for (let depth = 0; depth < input.chain.length; depth++) {
    const model = input.chain[depth];
    const reservationId = await holdForHop(input, depth, hops);
    if (reservationId === 'stop') break;
    if (reservationId === null) continue;

    let outcome: CallResult;
    try {
      outcome = await chain.call(model, depth);
    } catch (err) {
      if (chain.abandonOn && (await chain.abandonOn(err, reservationId, depth))) throw err;
      await ledger.releaseCredits({ reservationId, reason: 'model call failed' });
      hops.push({ model, outcome: 'failed', reason: gatewayErrorOf(err)?.message ?? String(err) });
      lastFailure = err;
      if (mayFallBack(err)) continue;
      break; // caller errors never fall back
    }

    const settled = await ledger.settleRequest({
      reservationId,
      chargeMicro: outcome.chargeMicro,
      usage: {
        ...usageBase(input), modelUsed: model, fallbackDepth: depth, status: 'succeeded',
        inputTokens: outcome.usage.inputTokens, outputTokens: outcome.usage.outputTokens, units: outcome.usage.units,
        latencyMs: Date.now() - startedAt,
      },
    });
    hops.push({ model, outcome: 'served' });
    return {
      response: outcome.response,
      modelUsed: model,
      fallbackFrom: depth > 0 ? input.chain[0] : null,
      fallbackDepth: depth,
      creditsUsedMicro: settled.chargedMicro,
      hops,
    };
  }
  return failExhausted(input, hops, lastFailure, startedAt);
}
