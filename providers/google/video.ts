/**
 * Veo video generation: `:predictLongRunning` starts an operation whose name is our operation id;
 * `GET /v1beta/<name>` polls it. Finished videos sit behind URIs that need the API key, so the poll
 * downloads them itself and returns the bytes.
 */
import { InvalidRequestError } from '../../core/errors';
import { expectShape, upstreamBytes, upstreamJson } from '../http';
import type { CallContext, VideoModelAdapter, VideoPollResult, VideoSubmitRequest } from '../types';
import type { GoogleEndpoint } from './endpoint';

interface Operation {
  name?: string;
  done?: boolean;
  error?: { code?: number; message?: string };
  response?: {
    generateVideoResponse?: {
      generatedSamples?: Array<{ video?: { uri?: string; mimeType?: string } }>;
      raiMediaFilteredCount?: number;
      raiMediaFilteredReasons?: string[];
    };
  };
}

/** google.rpc codes worth another try: DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, INTERNAL, UNAVAILABLE. */
const TRANSIENT_RPC_CODES = new Set([4, 8, 10, 13, 14]);

export function createGoogleVideo(endpoint: GoogleEndpoint, model: string): VideoModelAdapter {
  const { provider } = endpoint;
  return {
    async doSubmit(req: VideoSubmitRequest, ctx: CallContext): Promise<{ operationId: string }> {
      const headers = endpoint.headers();
      const instance: Record<string, unknown> = { prompt: req.prompt };
      if (req.image) instance.image = { bytesBase64Encoded: req.image.data.toString('base64'), mimeType: req.image.mediaType };
      const parameters: Record<string, unknown> = { sampleCount: req.n };
      if (req.aspectRatio !== undefined) parameters.aspectRatio = req.aspectRatio;
      if (req.durationSeconds !== undefined) parameters.durationSeconds = req.durationSeconds;
      if (req.resolution !== undefined) parameters.resolution = req.resolution;
      if (req.personGeneration !== undefined) parameters.personGeneration = req.personGeneration;
      if (req.params.negative_prompt !== undefined) parameters.negativePrompt = req.params.negative_prompt;
      if (req.params.seed !== undefined) parameters.seed = req.params.seed;

      const answer = await upstreamJson<Operation>(provider, endpoint.modelUrl(model, 'predictLongRunning'), {
        json: { instances: [instance], parameters }, headers, signal: ctx.signal, timeoutMs: endpoint.timeoutMs(ctx),
      });
      const name = answer.body?.name;
      expectShape(provider, typeof name === 'string' && isOperationName(name), 'no operation name');
      return { operationId: name };
    },

    async doPoll(operationId: string, ctx: CallContext): Promise<VideoPollResult> {
      const headers = endpoint.headers();
      if (!isOperationName(operationId)) throw new InvalidRequestError(`not a ${provider} operation id: ${operationId}`, { code: 'invalid_operation_id' });
      const answer = await upstreamJson<Operation>(provider, endpoint.url(operationId), { headers, signal: ctx.signal, timeoutMs: endpoint.timeoutMs(ctx) });
      const operation = answer.body;
      expectShape(provider, !!operation && typeof operation === 'object', 'operation is not an object');
      // Veo reports no progress while it works.
      if (!operation.done) return { status: 'processing' };
      if (operation.error) {
        return {
          status: 'failed',
          error: operation.error.message || `${provider} video generation failed`,
          retryable: TRANSIENT_RPC_CODES.has(operation.error.code ?? -1),
        };
      }
      const result = operation.response?.generateVideoResponse;
      const uris = (result?.generatedSamples ?? []).map((sample) => sample?.video?.uri).filter((uri): uri is string => typeof uri === 'string');
      if (uris.length === 0) {
        const reasons = result?.raiMediaFilteredReasons ?? [];
        expectShape(provider, reasons.length > 0 || (result?.raiMediaFilteredCount ?? 0) > 0, 'finished operation without videos');
        return { status: 'failed', error: `${provider} declined to generate this video${reasons.length > 0 ? `: ${reasons.join('; ')}` : ''}`, retryable: false };
      }
      const videos = await Promise.all(uris.map(async (uri) => {
        const { data, headers: answerHeaders } = await upstreamBytes(provider, uri, {
          headers: endpoint.downloadHeaders(uri), signal: ctx.signal, timeoutMs: endpoint.timeoutMs(ctx),
        });
        const contentType = answerHeaders.get('content-type')?.split(';')[0].trim();
        return { data, mediaType: contentType?.startsWith('video/') ? contentType : 'video/mp4' };
      }));
      return { status: 'succeeded', videos };
    },
  };
}

/** `models/<model>/operations/<id>`: also keeps a stored id from steering the poll elsewhere. */
function isOperationName(name: string): boolean {
  return /^models\/[\w.-]+\/operations\/[\w.-]+$/.test(name);
}
