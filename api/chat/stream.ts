/**
 * `POST /v1/chat/completions` and `POST /v1/responses` with `stream: true`. The route parks its connection
 * in the stream registry and starts the streaming workflow; the workflow's stream activity, on this
 * process's own task queue, writes the bytes. Until the first byte an error is still an ordinary JSON error
 * with its status.
 */
import { InvalidRequestError } from '../../core/errors';
import type { chatStreamWorkflow, ChatStreamInput } from '../../workflows/chat-stream';
import type { AppDeps, GatewayContext } from '../http/context';
import { abandonUnlessStarted, requestInput, startRequestWorkflow } from '../requests/start';
import { hopTicket, streamHopInput } from '../../workflows/hop-inputs';
import type { Endpoint } from '../../endpoints/types';
import { awaitOutcome, closeStoppedRun, expectOutcome } from '../requests/outcome';
import { requestWorkflowId } from '../../workflows/contracts';
import { RequestPhases } from '../http/server-timing';

/** Streams a chat model's answer in the wire format of `endpoint` (see endpoints/stream-formats.ts). */
export async function streamChatAnswer(ctx: GatewayContext, deps: AppDeps, req: { endpoint: Extract<Endpoint, 'chat.completions' | 'responses' | 'messages'>; model: string; body: unknown }): Promise<void> {
  const { requestId } = ctx.state;
  if (ctx.get('idempotency-key')) {
    throw new InvalidRequestError('Idempotency-Key is not supported with stream: true; retry without streaming to get a replayable result.', { param: 'Idempotency-Key', code: 'idempotency_not_supported_for_streams' });
  }
  const input: ChatStreamInput = {
    ...(await requestInput(ctx, deps, req)),
    streamTaskQueue: deps.streaming.taskQueue,
    localWorker: deps.streaming.localWorker && deps.config.eagerStart,
  };
  const phases = new RequestPhases(ctx);
  phases.end('admission');
  const sink = deps.streaming.registry.open(requestId, ctx.res, () => { ctx.respond = false; });
  const workflowId = requestWorkflowId(requestId);
  // The first hop holds and opens the upstream stream while the run starts; its first byte waits for the run.
  const firstHop = deps.firstHop?.chatStream(streamHopInput(input, 0, hopTicket(input, 0, Date.now(), workflowId))) ?? null;
  // A run started eagerly here tells its end in-process (api/requests/outcome.ts); another is asked of the server.
  const expectation = expectOutcome(deps.results, workflowId);
  try {
    let handle;
    try {
      handle = await startRequestWorkflow<typeof chatStreamWorkflow>(ctx, deps, 'chatStreamWorkflow', {
        workflowId, args: [input], model: req.model, endpoint: req.endpoint, workflowExecutionTimeout: '45 minutes',
      });
    } catch (err) {
      expectation?.cancel();
      if (firstHop) abandonUnlessStarted(firstHop, err);
      throw err;
    }
    // Before the first byte can go out (the run exists now), so it goes out with it.
    phases.end('start');
    // Wherever the run's task went, its stream activity comes to this process (the one holding the connection).
    firstHop?.confirm();
    const result = awaitOutcome<typeof chatStreamWorkflow>(handle, expectation, { requestId, joined: false, patienceMs: deps.config.outcomeWaitSeconds * 1000 });
    // Before the first byte, a failed workflow is an ordinary error response (status and JSON body).
    await Promise.race([sink.whenStarted(), result]);
    if (!sink.hasStarted) {
      await result.catch(async (err: unknown) => {
        // Stopped before its first byte: the stream must not start now, and its hold goes back before the client is told.
        firstHop?.stop('its run ended without it');
        throw await closeStoppedRun(deps.db, workflowId, err);
      });
      return;
    }
    await result.catch((err) => deps.log.error({ err, requestId }, 'stream settled with an error'));
  } finally {
    deps.streaming.registry.close(requestId);
  }
}
