/**
 * The streaming chat hop. It runs on the task queue of the API process that holds the client's connection,
 * holds the hop's credits (a refused hold is returned before anything is written, so the API can still
 * answer with the error's status), and writes the answer straight to the client, in the wire format of the
 * endpoint that asked (chat completion chunks, or Responses events: endpoints/stream-formats.ts). Before
 * the first byte a failure is thrown (the workflow may retry or fall back); after it, every ending (finish,
 * upstream error, client gone) is settled here, at what was used, before the stream's end is written, and
 * returned. Heartbeats carry the running usage with every chunk, so a process that dies mid-stream is
 * billed for what it sent. The hop's rules (when a hold may be called on, settling) are activities/hop.ts.
 */
import { Context } from '@temporalio/activity';
import { chatCost } from '../catalog/pricing';
import type { StreamRegistry, StreamSink } from './stream-registry';
import { forgetStreamProgress, recordStreamProgress, throttledProgressWriter } from '../domain/stream-progress';
import { cacheUnits, withFileContents } from '../endpoints/chat/handler';
import { choiceCount, promptCharacters, toChatRequest } from '../endpoints/chat/request';
import { streamChoices } from '../endpoints/chat/choices';
import { estimateTokens } from '../endpoints/chat/tokens';
import { chatStreamFormat } from '../endpoints/stream-formats';
import type { Endpoint } from '../endpoints/types';
import { GatewayError, NotFoundError, ServiceUnavailableError, UpstreamError } from '../core/errors';
import { modelAdapter } from '../endpoints/model-adapter';
import type { ChatStreamPart, FinishReason, SimulationDirective, TokenUsage } from '../providers/types';
import type { ActivityDeps } from './deps';
import { heartbeating } from './heartbeat';
import { loadPayload, type PayloadRef } from './request-io';
import type { UsageRecord } from '../domain/request-accounting';
import { settleAndSignal } from './budget-signal';
import { streamUsageStatus, type KeySource } from '../domain/usage-record';
import { log } from '../core/log';
import { denialOf, settlePatiently, type HopDenied, type HopHold, type HopSettlement } from './hop';
import { holdCredits, servingFor } from './requests';
import { RunWatch } from './run-watch';
import type { FirstHop, FirstHops } from './first-hop';

export interface StreamChatInput {
  requestId: string;
  /** Whose wire format the answer is written in (runs started before it was passed stream chat completions). */
  endpoint?: Endpoint;
  model: string;
  body: PayloadRef<unknown>;
  created: number;
  fallbackFrom: string | null;
  fallbackDepth: number;
  simulate?: SimulationDirective;
  /** The requesting workspace (its uploaded files may be named in the messages). */
  workspaceId?: string;
  /** The hop's hold, taken here once this process knows it holds the connection. */
  hold: HopHold;
  /** The usage record's fixed fields: the stream settles itself before `[DONE]`. */
  settlement: HopSettlement;
}

/** `not_here`: this process does not hold the request's connection (the workflow then asks the one that does). */
export type StreamEnding = 'completed' | 'client_disconnected' | 'upstream_error' | 'server_shutdown' | 'not_here';

export interface StreamChatOutcome {
  ending: StreamEnding;
  inputTokens: number;
  outputTokens: number;
  chargeMicro: number;
  finishReason: FinishReason | null;
  error?: string;
  /** The client was gone before anything was held (nothing to settle; the workflow records the request). */
  nothingHeld?: boolean;
  /** What was charged when this activity settled it (before `[DONE]`); null or absent: the workflow settles. */
  settledMicro?: number | null;
}

/** What a heartbeat carries: enough to bill the generated part if this process dies mid-stream. */
export interface StreamProgress {
  inputTokens: number;
  outputChars: number;
  /** Set once the stream ended: exactly what is billed. */
  final?: { ending: StreamEnding; inputTokens: number; outputTokens: number; chargeMicro: number; units?: Record<string, number>; deployment?: string | null; keySource?: KeySource };
}

/** How long a stream that ended keeps trying to record its usage (the workflow settles from its result after that). */
const STREAM_SETTLE_PATIENCE_MS = 120_000;

/** How one run of a stream hop reports and is stopped: by its activity, or as a first hop (activities/first-hop.ts). */
export interface StreamHopRun {
  /** The activity's attempt (a first hop is attempt 1). */
  attempt: number;
  /** The running usage, with every chunk (what heartbeats carry). */
  report(progress: StreamProgress): void;
  /** Whether its settlement should stop retrying (the activity was cancelled). */
  stopped(): boolean;
  /** Waited for before the first byte is written (a first hop waits for its run). */
  beforeFirstByte?(): Promise<void>;
  /** Aborts the upstream call (a first hop whose run was not started). */
  signal?: AbortSignal;
}

/** What a stream begun as a first hop shares with the activity that claims it. */
export interface StreamWatch {
  latest: StreamProgress;
  /** Set by the claiming activity: each report becomes a heartbeat. */
  onReport?(progress: StreamProgress): void;
  stopped?(): boolean;
}

type StreamHopOutcome = StreamChatOutcome | HopDenied;
type StreamDeps = ActivityDeps & { streams: StreamRegistry };

/**
 * Begins a stream's first hop while its run starts (activities/first-hop.ts): hold and open the upstream
 * stream now, write the first byte once the run is confirmed or the stream activity claims the hop.
 */
export function beginChatStreamHop(deps: StreamDeps & { firstHops: FirstHops }, input: StreamChatInput): FirstHop<StreamHopOutcome, StreamWatch> {
  const watch: StreamWatch = { latest: { inputTokens: 0, outputChars: 0 } };
  return deps.firstHops.begin(input.hold.reservationId, input.model, 'streamChat', watch, ({ gate, signal }) => streamChatHop(deps, input, {
    attempt: 1, signal, beforeFirstByte: gate,
    report: (progress) => { watch.latest = progress; watch.onReport?.(progress); },
    stopped: () => watch.stopped?.() ?? false,
  }));
}

export function createStreamActivities(deps: StreamDeps) {
  return {
    /**
     * One stream hop. As an ordinary activity its running usage goes out in heartbeats (with every chunk and,
     * between chunks, on a timer); as a local activity, which cannot heartbeat, to Postgres at most once a
     * second (domain/stream-progress.ts). Either way a process that dies mid-stream is billed what it sent.
     */
    async streamChat(input: StreamChatInput): Promise<StreamHopOutcome> {
      const context = Context.current();
      const stopped = () => context.cancellationSignal.aborted;
      const reservationId = input.hold.reservationId;
      const persisted = context.info.isLocal ? throttledProgressWriter((progress) => recordStreamProgress(deps.db, reservationId, progress)) : null;
      const report = (progress: StreamProgress) => (persisted ? persisted.report(progress) : context.heartbeat(progress));
      const keepingTrack = async (work: () => Promise<StreamHopOutcome>, latest: () => StreamProgress) => {
        try {
          return persisted ? await work() : await heartbeating(work, latest);
        } finally {
          // Settled (or given up to the workflow, which settles from this outcome): the row has said its part.
          if (persisted?.wrote) await forgetStreamProgress(deps.db, reservationId).catch(() => undefined);
        }
      };
      // A run cancelled, terminated or timed out stops the stream (activities/run-watch.ts): what was generated is billed.
      const watch = new RunWatch(context, { heartbeat: false });
      try {
        // The same hop begun here while the run started: keep track of its progress until it ends, and return its outcome.
        const begun = deps.firstHops?.claim<StreamHopOutcome, StreamWatch>(reservationId, input.model);
        if (begun) {
          Object.assign(begun.watch, { onReport: report, stopped });
          watch.signal.addEventListener('abort', () => begun.stop('its run ended'), { once: true });
          return await keepingTrack(() => begun.outcome, () => begun.watch.latest);
        }
        let latest: StreamProgress = { inputTokens: 0, outputChars: 0 };
        return await keepingTrack(() => streamChatHop(deps, input, {
          attempt: context.info.attempt, stopped, report: (progress) => { latest = progress; report(progress); }, signal: watch.signal,
        }), () => latest);
      } finally {
        watch.end();
      }
    },
  };
}

/** One stream hop: hold, stream the answer to the client, settle before its end is written. */
async function streamChatHop(deps: StreamDeps, input: StreamChatInput, run: StreamHopRun): Promise<StreamHopOutcome> {
  const sink = deps.streams.get(input.requestId);
  // Only the process holding the connection holds credits and streams.
  if (!sink) return { ...NOTHING, ending: 'not_here' };
  return sink.serve(() => streamToSink(deps, input, sink, run));
}

const NOTHING: StreamChatOutcome = { ending: 'client_disconnected', inputTokens: 0, outputTokens: 0, chargeMicro: 0, finishReason: null };

async function streamToSink(deps: StreamDeps, input: StreamChatInput, sink: StreamSink, run: StreamHopRun): Promise<StreamHopOutcome> {
  const { attempt, report } = run;
  // Nothing is held for a client already gone.
  if (sink.clientGone) return { ...NOTHING, nothingHeld: true };

  const hold = await holdCredits(deps, { ...input.hold, endpoint: input.endpoint ?? 'chat.completions', model: input.model, body: input.body, requestId: input.requestId });
  const denied = denialOf(hold, input);
  if (denied) return denied;
  // This hop's stream already ended and was billed (a retry after its end): it is never written twice.
  if (hold.ok && hold.status === 'settled') return { ...NOTHING, chargeMicro: hold.chargedMicro ?? 0, settledMicro: hold.chargedMicro };

  const listed = await deps.catalog.get(input.model);
  if (!listed) throw new NotFoundError(`The model '${input.model}' does not exist.`, { code: 'model_not_found' });
  const { providers, record, keySource } = await servingFor(deps, input.hold.workspaceId, listed);
  const format = chatStreamFormat(input.endpoint ?? 'chat.completions');
  const body = await loadPayload(deps.storage, input.body);
  const chatBody = format.chatBody(body, record);
  const promptTokensEstimate = estimateTokens(promptCharacters(chatBody));
  const abort = new AbortController();
  sink.onClientGone(() => abort.abort());
  run.signal?.addEventListener('abort', () => abort.abort(), { once: true });

  let iterator: AsyncIterator<ChatStreamPart>;
  let first: IteratorResult<ChatStreamPart>;
  const served = { deployment: null as string | null };
  try {
    const adapter = modelAdapter({ providers, served }, record, 'chat');
    const request = { ...toChatRequest(await withFileContents(chatBody, record, { db: deps.db, storage: deps.storage, workspaceId: input.workspaceId }), record), ...format.chatRequest?.(body, record) };
    iterator = streamChoices(adapter, request, choiceCount(chatBody), {
      requestId: input.requestId, signal: abort.signal, simulate: input.simulate ? { ...input.simulate, attempt } : undefined,
    })[Symbol.asyncIterator]();
    first = await iterator.next();
  } catch (err) {
    if (sink.clientGone) return { ...NOTHING };
    throw err; // before the first byte: retried or fallen back under the one failure policy
  }
  try {
    await run.beforeFirstByte?.();
  } catch (err) {
    abort.abort();
    await iterator.return?.().catch(() => undefined);
    throw err;
  }

  const writer = format.writer(body, {
    requestId: input.requestId, created: input.created, model: record.slug, send: (data, event) => sink.send(data, event), db: deps.db, workspaceId: input.workspaceId,
  });
  sink.start({
    'x-model-used': record.slug,
    ...(input.fallbackFrom ? { 'x-fallback-from': input.fallbackFrom, 'x-fallback-depth': String(input.fallbackDepth) } : {}),
  });
  writer.open();

  let outputChars = 0;
  let usage: TokenUsage | null = null;
  let finishReason: FinishReason | null = null;
  let finishReasons: FinishReason[] | undefined;
  let ending: StreamEnding = 'completed';
  let error: string | undefined;
  // Every chunk: the SDK sends the latest at its throttle interval (the workers set it to a second).
  const beat = () => report({ inputTokens: promptTokensEstimate, outputChars });
  try {
    for (let step = first; !step.done; step = await iterator.next()) {
      const part = step.value;
      if (part.type === 'finish') {
        finishReason = part.finishReason;
        finishReasons = part.finishReasons;
        if (part.usage.inputTokens + part.usage.outputTokens > 0) usage = part.usage;
      } else {
        outputChars += part.type === 'tool-call-delta' ? part.argumentsDelta.length + (part.name?.length ?? 0) : part.type === 'anthropic-event' ? 0 : part.delta.length;
        writer.part(part);
      }
      if (sink.clientGone) break;
      beat();
    }
  } catch (err) {
    if (!sink.clientGone) {
      ending = 'upstream_error';
      // An untyped failure's own text (a stack's wording, an address) is not the client's to read.
      const gw = run.signal?.aborted
        ? new ServiceUnavailableError('The request was stopped before it finished; what was generated up to here is billed.', { code: 'request_stopped' })
        : err instanceof GatewayError ? err : new UpstreamError('The model stream broke off.', { kind: 'network', provider: record.provider });
      error = gw.message;
      writer.fail(gw);
    }
  }
  if (sink.clientGone) {
    // The server cut it short (a shutdown past its grace period): like a client gone, plus an error event at the end.
    const cut = sink.cutError;
    ending = cut ? 'server_shutdown' : 'client_disconnected';
    abort.abort();
    await iterator.return?.().catch(() => undefined);
    if (cut) {
      error = cut.message;
      writer.fail(cut);
    }
  }

  // The provider's count when it gave one; otherwise (and for cut-off streams) an estimate of what was generated.
  const billed = usage && ending === 'completed'
    ? usage
    : { inputTokens: usage?.inputTokens ?? promptTokensEstimate, outputTokens: Math.max(usage?.outputTokens ?? 0, estimateTokens(outputChars), ending === 'completed' ? 0 : 1) };
  const chargeMicro = chatCost(record, billed);
  const units = cacheUnits(billed);
  const progress: StreamProgress = {
    inputTokens: promptTokensEstimate, outputChars,
    final: { ending, inputTokens: billed.inputTokens, outputTokens: billed.outputTokens, chargeMicro, ...(units ? { units } : {}), ...(served.deployment ? { deployment: served.deployment } : {}), keySource },
  };
  report(progress);
  // The books first: a crash after the last byte then bills what was delivered.
  const settledMicro = await settleStream(deps, input.settlement, progress, run.stopped);
  if (ending === 'completed') await writer.finish({ finishReason: finishReason ?? 'stop', finishReasons, usage: billed, chargeMicro });
  if (ending !== 'client_disconnected') writer.close();
  sink.end();
  return { ending, inputTokens: billed.inputTokens, outputTokens: billed.outputTokens, chargeMicro, finishReason, error, settledMicro };
}

/**
 * Settles a stream that ended, from the process that wrote it, before `[DONE]`: a crash after the last byte
 * then bills what was delivered. Retried (still heartbeating) through a database outage for a while; past that the
 * workflow settles from this activity's result instead (null). Idempotent with the workflow's own settlement.
 */
async function settleStream(deps: ActivityDeps, settlement: HopSettlement, progress: StreamProgress, stopped: () => boolean): Promise<number | null> {
  const ended = progress.final!;
  const usage: UsageRecord = {
    ...settlement.usage, ...streamUsageStatus(ended.ending), inputTokens: ended.inputTokens, outputTokens: ended.outputTokens, ...(ended.units ? { units: ended.units } : {}),
    ...(ended.keySource ? { keySource: ended.keySource } : {}), latencyMs: Date.now() - settlement.startedAt, deployment: ended.deployment ?? null,
  };
  const settled = await settlePatiently(() => settleAndSignal(deps, { reservationId: settlement.reservationId, chargeMicro: ended.chargeMicro, usage }), {
    patienceMs: STREAM_SETTLE_PATIENCE_MS,
    stopped,
    gaveUp: (err) => log.warn({ err, reservationId: settlement.reservationId }, 'a stream could not record its usage; its workflow settles it'),
  });
  return settled?.chargedMicro ?? null;
}
