/**
 * A streaming chat request. Money and model choice stay durable here; the bytes go from the stream
 * activity (in the API process holding the connection) straight to the client. Each hop is that one
 * activity: it holds the credits, streams and settles, so the first upstream byte waits for no separate
 * step. Fallback happens only before the first byte; after it, whatever ended the stream is settled at
 * what was used.
 */
import { ActivityFailure, patched, proxyActivities, proxyLocalActivities, TimeoutFailure } from '@temporalio/workflow';
import type { StreamActivities } from '../activities';
import type { StreamChatOutcome, StreamProgress } from '../activities/stream-chat';
import { isDenied, ledger, serveAlongChain, type HopRecord, type HopServed, type ModelRequestInput } from './request-steps';
import { streamUsageStatus } from '../domain/usage-record';
import { streamHopInput } from './hop-inputs';
import { reportingToCaller } from './result-sinks';

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
 * First choice, where the API process holding the connection also runs a worker: the stream as a local
 * activity of this workflow task, which (with eager start) runs in that process. No activity task, no
 * heartbeats and no second workflow task go through the server: the run is one task, as a plain request's
 * is. It keeps its progress in Postgres instead of heartbeats. It answers `not_here` when the task ran
 * elsewhere, and the process's own task queue is used instead.
 */
const streamHere = proxyLocalActivities<StreamActivities>({ startToCloseTimeout: STREAM_OPTIONS.startToCloseTimeout, retry: STREAM_OPTIONS.retry });

export interface ChatStreamResult {
  modelUsed: string;
  fallbackFrom: string | null;
  fallbackDepth: number;
  creditsUsedMicro: number;
  ending: StreamChatOutcome['ending'];
  hops: HopRecord[];
}

/**
 * The usage the stream had reported when its process stopped answering: in its last heartbeat, or (a stream
 * served as a local activity) what it last wrote to Postgres.
 */
async function lastProgress(err: unknown, reservationId: string): Promise<StreamProgress | null> {
  if (!(err instanceof ActivityFailure && err.cause instanceof TimeoutFailure)) return null;
  const heartbeat = (err.cause.lastHeartbeatDetails as StreamProgress | undefined) ?? null;
  return heartbeat ?? ledger.streamProgress({ reservationId });
}

/**
 * A stream settles itself before it writes `[DONE]`. When its process then died before its activity could
 * report (or the retry found no process holding the connection), the books already say how it ended: the
 * run follows them (the client has its whole answer) instead of failing or billing an estimate.
 */
const FOLLOW_SETTLED_STREAM = 'follow-settled-stream';

async function settledStream(reservationId: string): Promise<HopServed<StreamChatOutcome['ending']> | null> {
  if (!patched(FOLLOW_SETTLED_STREAM)) return null;
  const settled = await ledger.settledHop({ reservationId });
  if (!settled) return null;
  const ending = settled.status === 'succeeded' ? 'completed' : 'client_disconnected';
  return { ...streamed({ ending, inputTokens: settled.inputTokens, outputTokens: settled.outputTokens }, settled.chargedMicro), settledMicro: settled.chargedMicro };
}

const NOT_HERE: StreamChatOutcome = { ending: 'not_here', inputTokens: 0, outputTokens: 0, chargeMicro: 0, finishReason: null };

export async function chatStreamWorkflow(input: ChatStreamInput): Promise<ChatStreamResult> {
  // The API of the process that started the run learns how it ended in-process, without a long poll of the server.
  return reportingToCaller(() => streamAlongChain(input));
}

async function streamAlongChain(input: ChatStreamInput): Promise<ChatStreamResult> {
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
        const settled = outcome.ending === 'not_here' ? await settledStream(ticket.hold.reservationId) : null;
        if (settled) return settled;
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
    // The process holding the stream died: bill what it last reported (exactly, once the stream ended).
    async billAfterFailure(err, model, reservationId) {
      const settled = await settledStream(reservationId);
      if (settled) return settled;
      const progress = await lastProgress(err, reservationId);
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
