/**
 * A streamed image request (`stream: true` on image generations and edits): the same durable steps as
 * modelRequestWorkflow (each hop holds, calls and settles, along the fallback chain), but the hop runs as
 * an activity on the task queue of the API process holding the client's event stream, which reports
 * progress to it while the model works. The API writes the final events from this result.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { StreamActivities } from '../activities';
import { ledger, requestResult, serveAlongChain, servedHop, usageBase, type ModelRequestInput, type ModelRequestResult } from './request-steps';

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
  return requestResult(await serveAlongChain(input, {
    call: async (model, depth, ticket) => servedHop(await progress.serveImageHopWithProgress({
      endpoint: input.endpoint, model, body: input.body, requestId: input.requestId, created: input.created, simulate: input.simulate,
      workspaceId: input.workspaceId, fallbackFrom: depth > 0 ? input.chain[0] : null, fallbackDepth: depth, ...ticket,
    })),
    // A client that left before the model was called: nothing to fall back for, and nothing charged.
    async abandonOn(err, reservationId, depth) {
      if (!clientLeft(err)) return false;
      await ledger.failRequest({
        reservationId, reason: 'client disconnected before the model was called',
        usage: { ...usageBase(input), modelUsed: null, fallbackDepth: depth, status: 'cancelled', inputTokens: 0, outputTokens: 0, errorCode: 'client_disconnected', latencyMs: Date.now() - startedAt },
      });
      return true;
    },
  }));
}
