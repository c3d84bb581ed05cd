/**
 * A streaming chat request. Money and model choice stay durable here; the bytes go from the stream
 * activity (on the task queue of the API process holding the connection) straight to the client. Fallback
 * happens only before the first byte; after it, whatever ended the stream is settled at what was used.
 */
import { ActivityFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { StreamActivities } from '../activities';
import type { StreamChatOutcome, StreamProgress } from '../activities/stream-chat';
import { ledger, serveAlongChain, usageBase, type HopRecord, type HopServed, type ModelRequestInput } from './request-steps';
import { streamUsageStatus } from '../domain/usage-record';

export interface ChatStreamInput extends ModelRequestInput {
  /** Task queue of the API process that holds the client's connection. */
  streamTaskQueue: string;
  /** That process also runs a worker of the workflow's task queue (so an eagerly dispatched stream activity lands there). */
  localWorker?: boolean;
}

const STREAM_OPTIONS = {
  startToCloseTimeout: '30 minutes',
  // The activity heartbeats every second (and with every chunk): a process that died is noticed in seconds.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '250 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
} as const;

/**
 * First choice: the stream activity on the workflow's own task queue, dispatched eagerly to the worker
 * that runs this workflow task, which (with eager start) is the one in the API process holding the
 * connection: no trip through the server's matching before the first token. It answers `not_here` when
 * it ran elsewhere, and the process's own task queue is used instead.
 */
const streamHere = proxyActivities<StreamActivities>({ ...STREAM_OPTIONS, scheduleToStartTimeout: '15 seconds' });

export interface ChatStreamResult {
  modelUsed: string;
  fallbackFrom: string | null;
  fallbackDepth: number;
  creditsUsedMicro: number;
  ending: StreamChatOutcome['ending'];
  hops: HopRecord[];
}

/** The usage the stream had reported when its process stopped answering. */
function lastProgress(err: unknown): StreamProgress | null {
  if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure) {
    return (err.cause.lastHeartbeatDetails as StreamProgress | undefined) ?? null;
  }
  return null;
}

export async function chatStreamWorkflow(input: ChatStreamInput): Promise<ChatStreamResult> {
  const stream = proxyActivities<StreamActivities>({
    ...STREAM_OPTIONS,
    taskQueue: input.streamTaskQueue,
    // The process is local to the request: if it cannot pick the task up quickly, it is gone.
    scheduleToStartTimeout: '15 seconds',
  });
  const startedAt = Date.now();
  const { detail, ...result } = await serveAlongChain<StreamChatOutcome['ending']>(input, {
    releaseReason: 'stream failed before its first byte',
    async call(model, depth, reservationId) {
      const args = {
        requestId: input.requestId, endpoint: input.endpoint, model, body: input.body, created: input.created,
        fallbackFrom: depth > 0 ? input.chain[0] : null, fallbackDepth: depth, simulate: input.simulate, workspaceId: input.workspaceId,
        settlement: { reservationId, usage: { ...usageBase(input), modelUsed: model, fallbackDepth: depth }, startedAt },
      };
      let outcome: StreamChatOutcome = input.localWorker ? await streamHere.streamChat(args) : { ending: 'not_here', inputTokens: 0, outputTokens: 0, chargeMicro: 0, finishReason: null };
      if (outcome.ending === 'not_here') outcome = await stream.streamChat(args);
      // The process holding the connection no longer knows the request: nothing was streamed from here.
      if (outcome.ending === 'not_here') outcome = { ...outcome, ending: 'client_disconnected' };
      return streamed(outcome, outcome.chargeMicro);
    },
    // The process holding the stream died: bill what its last heartbeat reported (exactly, once the stream ended).
    async billAfterFailure(err, model) {
      const progress = lastProgress(err);
      if (progress?.final) return streamed(progress.final, progress.final.chargeMicro);
      if (!progress || progress.outputChars === 0) return null;
      const outputTokens = Math.ceil(progress.outputChars / 4);
      const chargeMicro = await ledger.priceChatUsage({ model, inputTokens: progress.inputTokens, outputTokens });
      return streamed({ ending: 'client_disconnected', inputTokens: progress.inputTokens, outputTokens }, chargeMicro);
    },
  });
  return { ...result, ending: detail };
}

function streamed(outcome: Pick<StreamChatOutcome, 'ending' | 'inputTokens' | 'outputTokens'>, chargeMicro: number): HopServed<StreamChatOutcome['ending']> {
  return {
    chargeMicro,
    usage: { inputTokens: outcome.inputTokens, outputTokens: outcome.outputTokens },
    ...streamUsageStatus(outcome.ending),
    detail: outcome.ending,
  };
}
