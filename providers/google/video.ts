/**
 * Veo video generation: `:predictLongRunning` starts an operation whose name is our operation id;
 * `GET /v1beta/<name>` polls it. Finished videos sit behind URIs that need the API key, so the poll
 * downloads them itself and returns the bytes.
 */
import { InvalidRequestError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape, upstreamBytes, upstreamJson } from '../http';
import type { CallContext, VideoModelAdapter, VideoPollResult, VideoSubmitRequest } from '../types';
import { apiUrl, modelUrl } from './paths';

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

export class GoogleVideoModel implements VideoModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doSubmit(req: VideoSubmitRequest, ctx: CallContext): Promise<{ operationId: string }> {
    const { providerId: provider } = this.connection;
    const request = this.connection.request(ctx);
    const instance: Record<string, unknown> = { prompt: req.prompt };
    if (req.image) instance.image = { bytesBase64Encoded: req.image.data.toString('base64'), mimeType: req.image.mediaType };
    const parameters: Record<string, unknown> = { sampleCount: req.n };
    if (req.aspectRatio !== undefined) parameters.aspectRatio = req.aspectRatio;
    if (req.durationSeconds !== undefined) parameters.durationSeconds = req.durationSeconds;
    if (req.resolution !== undefined) parameters.resolution = req.resolution;
    if (req.personGeneration !== undefined) parameters.personGeneration = req.personGeneration;
    if (req.params.negative_prompt !== undefined) parameters.negativePrompt = req.params.negative_prompt;
    if (req.params.seed !== undefined) parameters.seed = req.params.seed;

    const answer = await upstreamJson<Operation>(provider, modelUrl(this.connection, this.model, 'predictLongRunning'), {
      ...request, json: { instances: [instance], parameters },
    });
    const name = answer.body?.name;
    expectShape(provider, typeof name === 'string' && isOperationName(name), 'no operation name');
    return { operationId: name };
  }

  async doPoll(operationId: string, ctx: CallContext): Promise<VideoPollResult> {
    const { providerId: provider } = this.connection;
    const request = this.connection.request(ctx);
    if (!isOperationName(operationId)) throw new InvalidRequestError(`not a ${provider} operation id: ${operationId}`, { code: 'invalid_operation_id' });
    const answer = await upstreamJson<Operation>(provider, apiUrl(this.connection, operationId), request);
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
      // The key goes only to this host, never to a URL on another origin.
      const { data, headers: answerHeaders } = await upstreamBytes(provider, uri, this.connection.isOwnUrl(uri)
        ? request
        : { signal: ctx.signal, timeoutMs: this.connection.timeoutMs(ctx) });
      const contentType = answerHeaders.get('content-type')?.split(';')[0].trim();
      return { data, mediaType: contentType?.startsWith('video/') ? contentType : 'video/mp4' };
    }));
    return { status: 'succeeded', videos };
  }
}

/** `models/<model>/operations/<id>`: also keeps a stored id from steering the poll elsewhere. */
function isOperationName(name: string): boolean {
  return /^models\/[\w.-]+\/operations\/[\w.-]+$/.test(name);
}
