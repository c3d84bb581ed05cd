/**
 * One synchronous model request (chat, embeddings, images, speech, transcription, music), durable end to
 * end: hold credits -> call the model, falling back along the workspace's chain on throttling, 5xx and
 * timeouts -> settle the exact charge and record usage. Every hop shows in the run's history.
 *
 * Ledger steps and the model call are local activities: with eager start the whole request runs in one
 * workflow task on the worker inside the API process, with no extra server round trips.
 */
import type { CallResult } from '../activities/requests';
import { activitiesFor, failExhausted, gatewayErrorOf, holdForHop, mayFallBack, usageBase, type HopRecord, type ModelRequestInput } from './request-steps';
import { reportingToCaller } from './result-sinks';

export type { HopRecord, ModelRequestInput } from './request-steps';

export interface ModelRequestResult {
  response: CallResult['response'];
  modelUsed: string;
  fallbackFrom: string | null;
  fallbackDepth: number;
  creditsUsedMicro: number;
  hops: HopRecord[];
}

export async function modelRequestWorkflow(input: ModelRequestInput): Promise<ModelRequestResult> {
  return reportingToCaller(() => serveModelRequest(input));
}

async function serveModelRequest(input: ModelRequestInput): Promise<ModelRequestResult> {
  const { ledger, models } = activitiesFor(input);
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
      outcome = await models.callModel({ endpoint: input.endpoint, model, body: input.body, requestId: input.requestId, created: input.created, simulate: input.simulate, workspaceId: input.workspaceId });
    } catch (err) {
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
