/**
 * `POST /v1/chat/completions` with `stream: true`. The route parks its connection in the stream registry
 * and starts the streaming workflow; the workflow's stream activity, on this process's own task queue,
 * writes the bytes. Until the first byte an error is still an ordinary JSON error with its status.
 */
import { storePayload } from '../../activities/request-io';
import { InvalidRequestError } from '../../core/errors';
import { getFallbackChain } from '../../domain/workspaces';
import type { ChatStreamInput, ChatStreamResult } from '../../workflows/chat-stream';
import type { AppDeps, GatewayContext } from '../http/context';
import { simulationDirective } from '../requests/run';
import type { ChatCompletionBody } from '../../endpoints/chat/body';
import { requestSearchAttributes } from '../requests/workflow-ids';
import { requestWorkflowId } from '../../workflows/contracts';

export async function streamChatCompletion(ctx: GatewayContext, deps: AppDeps, body: ChatCompletionBody): Promise<void> {
  const { requestId, auth } = ctx.state;
  if (ctx.get('idempotency-key')) {
    throw new InvalidRequestError('Idempotency-Key is not supported with stream: true; retry without streaming to get a replayable result.', { param: 'Idempotency-Key', code: 'idempotency_not_supported_for_streams' });
  }
  const input: ChatStreamInput = {
    requestId,
    workspaceId: auth.workspaceId,
    apiKeyId: auth.keyId,
    endpoint: 'chat.completions',
    chain: [body.model, ...(await getFallbackChain(deps.db, auth.workspaceId, body.model))],
    allowedModels: auth.allowedModels,
    body: await storePayload(deps.storage, `requests/${requestId}.json`, body),
    created: Math.floor(Date.now() / 1000),
    clientRequestId: ctx.state.clientRequestId ?? null,
    simulate: simulationDirective(ctx),
    streamTaskQueue: deps.streaming.taskQueue,
    localWorker: deps.streaming.localWorker && deps.config.eagerStart,
  };
  const sink = deps.streaming.registry.open(requestId, ctx.res, () => { ctx.respond = false; });
  try {
    const handle = await deps.temporal.client.workflow.start('chatStreamWorkflow', {
      taskQueue: deps.temporal.taskQueue,
      workflowId: requestWorkflowId(requestId),
      args: [input],
      requestEagerStart: deps.config.eagerStart,
      typedSearchAttributes: requestSearchAttributes({ requestId, workspaceId: auth.workspaceId, apiKeyId: auth.keyId, model: body.model, endpoint: 'chat.completions' }),
      workflowExecutionTimeout: '45 minutes',
    });
    const result = handle.result() as Promise<ChatStreamResult>;
    // Before the first byte, a failed workflow is an ordinary error response (status and JSON body).
    await Promise.race([sink.whenStarted(), result]);
    if (!sink.hasStarted) {
      await result;
      return;
    }
    await result.catch((err) => deps.log.error({ err, requestId }, 'stream settled with an error'));
  } finally {
    deps.streaming.registry.close(requestId);
  }
}
