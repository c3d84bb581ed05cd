/**
 * `stream: true` on image generations and edits: a `text/event-stream` of progress while the durable
 * request runs, then the result. The route parks its connection in the stream registry and starts
 * imageStreamWorkflow; its call activity (on this process's task queue) commits the 200 once credits are
 * held and reports progress. Until then every refusal (validation, 402, a failing first hop) is an
 * ordinary JSON error. The events (see docs/endpoints-media.md):
 *
 *   : image_generation in_progress ...   an SSE comment as each model call starts, then every ~2 s
 *   event: image_generation.completed    (image_edit.* for edits) one per image, in order, with `b64_json` or `url`
 *   event: error                          when no model could serve the request after the stream began
 *   data: [DONE]
 */
import { readJsonResponse } from '../../endpoints/media';
import { completedEventFields, imagesUsage, responseFields, type ImageFields } from '../../endpoints/images/openai-fields';
import { sniffImageType } from '../../core/media-types';
import { imageEventPrefix } from '../../activities/stream-images';
import type { Endpoint } from '../../endpoints/types';
import { loadPayload } from '../../activities/request-io';
import { InvalidRequestError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import { toGatewayError } from '../../activities/failures';
import { clientError, errorBody } from '../http/errors';
import type { ModelRequestResult } from '../../workflows/model-request';
import type { imageStreamWorkflow, ImageStreamInput } from '../../workflows/image-stream';
import type { AppDeps, GatewayContext } from '../http/context';
import { requestInput, startRequestWorkflow } from '../requests/start';
import { runResult } from '../requests/outcome';
import type { StreamSink } from '../../activities/stream-registry';
import { requestWorkflowId } from '../../workflows/contracts';

export interface ImageStreamRequest {
  endpoint: Extract<Endpoint, 'images.generations' | 'images.edits'>;
  model: string;
  body: Record<string, unknown>;
  /** The merged model parameters, echoed on the completed events as OpenAI does (size, quality, ...). */
  params: Record<string, unknown>;
}

export async function streamImages(ctx: GatewayContext, deps: AppDeps, req: ImageStreamRequest): Promise<void> {
  const { requestId } = ctx.state;
  if (ctx.get('idempotency-key')) {
    throw new InvalidRequestError('Idempotency-Key is not supported with stream: true; retry without streaming to get a replayable result.', { param: 'Idempotency-Key', code: 'idempotency_not_supported_for_streams' });
  }
  const input: ImageStreamInput = {
    ...(await requestInput(ctx, deps, { endpoint: req.endpoint, model: req.model, body: req.body })),
    streamTaskQueue: deps.streaming.taskQueue,
  };
  const sink = deps.streaming.registry.open(requestId, ctx.res, () => { ctx.respond = false; });
  try {
    const handle = await startRequestWorkflow<typeof imageStreamWorkflow>(ctx, deps, 'imageStreamWorkflow', {
      workflowId: requestWorkflowId(requestId), args: [input], model: req.model, endpoint: req.endpoint, workflowExecutionTimeout: '45 minutes',
    });
    const result = runResult<ModelRequestResult>(handle, { requestId, joined: false, patienceMs: deps.config.outcomeWaitSeconds * 1000 });
    await Promise.race([sink.whenStarted(), result.catch(() => undefined)]);
    // Before the first byte a failed request is an ordinary error response (status and JSON body).
    if (!sink.hasStarted) await result;
    let settled: ModelRequestResult;
    try {
      settled = await result;
    } catch (err) {
      sink.send({ type: 'error', ...errorBody(clientError(toGatewayError(err), requestId)) }, 'error');
      sink.end();
      return;
    }
    sink.start({});
    await sendCompletedEvents(sink, deps, req, settled);
    sink.send('[DONE]');
    sink.end();
  } finally {
    deps.streaming.registry.close(requestId);
  }
}

/** One `completed` event per image: OpenAI's fields, plus the gateway's model and credits. */
async function sendCompletedEvents(sink: StreamSink, deps: AppDeps, req: ImageStreamRequest, result: ModelRequestResult): Promise<void> {
  const response = await readJsonResponse(deps.storage, await loadPayload(deps.storage, result.response));
  const event = `${imageEventPrefix(req.endpoint)}.completed`;
  const images = (response.data as Array<Record<string, unknown>>) ?? [];
  // OpenAI's completed event carries every field and the usage; what the answer does not say is `auto` (and zero).
  const reported = Object.fromEntries(['size', 'quality', 'background', 'output_format'].flatMap((k) => (typeof response[k] === 'string' ? [[k, response[k]]] : [])));
  const known: ImageFields = { ...responseFields(req.params, undefined), ...reported };
  const usage = response.usage ?? imagesUsage({ inputTokens: 0, outputTokens: 0 });
  images.forEach((image, index) => {
    const mediaType = typeof image.b64_json === 'string' ? sniffImageType(Buffer.from(image.b64_json.slice(0, 64), 'base64')) ?? undefined : undefined;
    sink.send({
      type: event,
      index,
      ...image,
      created_at: response.created,
      ...completedEventFields(known, mediaType),
      usage,
      model: result.modelUsed,
      ...(result.fallbackFrom ? { fallback_from: result.fallbackFrom, fallback_depth: result.fallbackDepth } : {}),
      credits_used: microToCredits(result.creditsUsedMicro),
    }, event);
  });
}
