/**
 * A streamed image request (`stream: true` on image generations and edits): the same durable steps as
 * modelRequestWorkflow (hold credits, call along the fallback chain, settle, usage record), but the call
 * runs as an activity on the task queue of the API process holding the client's event stream, which
 * reports progress to it while the model works. The API writes the final events from this result.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { StreamActivities } from '../activities';
import type { CallResult } from '../activities/requests';
import type { ModelRequestResult } from './model-request';
import { failExhausted, gatewayErrorOf, holdForHop, ledger, mayFallBack, usageBase, type HopRecord, type ModelRequestInput } from './request-steps';

export interface ImageStreamInput extends ModelRequestInput {
  /** Task queue of the API process that holds the client's connection. */
  streamTaskQueue: string;
}

const CLIENT_DISCONNECTED = 'ClientDisconnected';

function clientLeft(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure && cause.type === CLIENT_DISCONNECTED;
}

export async function imageStreamWorkflow(input: ImageStreamInput): Promise<ModelRequestResult> {
  const startedAt = Date.now();
  const progress = proxyActivities<StreamActivities>({
    taskQueue: input.streamTaskQueue,
    // The process is local to the request: if it cannot pick the task up quickly, it is gone.
    scheduleToStartTimeout: '15 seconds',
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '20 seconds',
    // The activity sets each retry's delay (exponential with jitter, or the upstream's Retry-After).
    retry: { initialInterval: '250 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
  });
  const hops: HopRecord[] = [];
  let lastFailure: unknown = null;

  for (let depth = 0; depth < input.chain.length; depth++) {
    const model = input.chain[depth];
    const reservationId = await holdForHop(input, depth, hops);
    if (reservationId === 'stop') break;
    if (reservationId === null) continue;

    let outcome: CallResult;
    try {
      outcome = await progress.callImageModelWithProgress({
        endpoint: input.endpoint, model, body: input.body, requestId: input.requestId, created: input.created, simulate: input.simulate,
        fallbackFrom: depth > 0 ? input.chain[0] : null, fallbackDepth: depth,
      });
    } catch (err) {
      if (clientLeft(err)) {
        await ledger.failRequest({
          reservationId, reason: 'client disconnected before the model was called',
          usage: { ...usageBase(input), modelUsed: null, fallbackDepth: depth, status: 'cancelled', inputTokens: 0, outputTokens: 0, errorCode: 'client_disconnected', latencyMs: Date.now() - startedAt },
        });
        throw err;
      }
      await ledger.releaseCredits({ reservationId, reason: 'model call failed' });
      hops.push({ model, outcome: 'failed', reason: gatewayErrorOf(err)?.message ?? String(err) });
      lastFailure = err;
      if (mayFallBack(err)) continue;
      break;
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
