/**
 * A streaming chat request. Money and model choice stay durable here; the bytes go from the stream
 * activity (on the task queue of the API process holding the connection) straight to the client. Each hop
 * is that one activity: it holds the credits, streams and settles, so the first upstream byte waits for no
 * separate step. Fallback happens only before the first byte; after it, whatever ended the stream is
 * settled at what was used.
 */
import { ActivityFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { StreamActivities } from '../activities';
import type { StreamChatOutcome, StreamProgress } from '../activities/stream-chat';
import { isDenied, ledger, serveAlongChain, type HopRecord, type HopServed, type ModelRequestInput } from './request-steps';
import { streamUsageStatus } from '../domain/usage-record';
import { streamHopInput } from './hop-inputs';

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

const NOT_HERE: StreamChatOutcome = { ending: 'not_here', inputTokens: 0, outputTokens: 0, chargeMicro: 0, finishReason: null };

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
    async call(_model, depth, ticket) {
      const args = streamHopInput(input, depth, ticket);
      let outcome = input.localWorker ? await streamHere.streamChat(args) : NOT_HERE;
      if (!isDenied(outcome) && outcome.ending === 'not_here') outcome = await stream.streamChat(args);
      if (isDenied(outcome)) return outcome;
      if (outcome.ending === 'not_here' || outcome.nothingHeld) {
        // No process holds the client's connection any more: nothing was held or streamed; the request is
        // recorded as the client's disconnect.
        await ledger.failRequest({
          reservationId: ticket.hold.reservationId, reason: 'client disconnected before the stream started',
          usage: { ...ticket.settlement.usage, status: 'cancelled', errorCode: 'client_disconnected', inputTokens: 0, outputTokens: 0, latencyMs: Date.now() - startedAt },
        });
        return { ...streamed({ ending: 'client_disconnected', inputTokens: 0, outputTokens: 0 }, 0), settledMicro: 0 };
      }
      return { ...streamed(outcome, outcome.chargeMicro), settledMicro: outcome.settledMicro };
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
