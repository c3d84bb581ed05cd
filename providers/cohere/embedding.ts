/**
 * Cohere embeddings: `POST /v2/embed` with float vectors requested explicitly. Cohere takes at most 96
 * texts a call, so larger inputs go out in consecutive batches that share the call's deadline.
 */
import { UpstreamError } from '../../core/errors';
import { embedInBatches } from '../embedding-batches';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, EmbeddingModelAdapter, EmbeddingRequest, EmbeddingResult, ProviderOptions } from '../types';

const MAX_TEXTS_PER_CALL = 96;
const DEFAULT_TIMEOUT_MS = 60_000;

interface CohereEmbedResponse {
  embeddings?: { float?: unknown };
  meta?: { billed_units?: { input_tokens?: unknown } };
}

export function createCohereEmbedding(options: ProviderOptions, upstreamModel: string): EmbeddingModelAdapter {
  const provider = options.id;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/v2/embed`;

  return {
    async doEmbed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
      const apiKey = options.apiKey;
      if (!apiKey) throw new UpstreamError(`${provider} is not configured (no API key)`, { kind: 'not_configured', provider });
      return embedInBatches(req.input, { batchSize: MAX_TEXTS_PER_CALL, ctx, defaultTimeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS }, async (texts, timeoutMs) => {
        const { body } = await upstreamJson<CohereEmbedResponse>(provider, url, {
          method: 'POST',
          headers: { ...(options.headers ?? {}), authorization: `Bearer ${apiKey}`, accept: 'application/json' },
          json: {
            model: upstreamModel,
            texts,
            // Our endpoint does not say what the text is for; documents are the common case (indexing).
            input_type: 'search_document',
            embedding_types: ['float'],
            ...(req.dimensions !== undefined ? { output_dimension: req.dimensions } : {}),
          },
          signal: ctx.signal,
          timeoutMs,
        });
        const vectors = body?.embeddings?.float;
        expectShape(provider, isVectorList(vectors, texts.length), 'embeddings.float does not hold one vector per text');
        return { embeddings: vectors, inputTokens: billedTokens(body, texts) };
      });
    },
  };
}

function isVectorList(value: unknown, count: number): value is number[][] {
  return Array.isArray(value) && value.length === count
    && value.every((v) => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number'));
}

function billedTokens(body: CohereEmbedResponse, texts: string[]): number {
  const billed = body.meta?.billed_units?.input_tokens;
  if (typeof billed === 'number' && Number.isFinite(billed) && billed >= 0) return billed;
  // Without Cohere's count, bill a rough four characters a token rather than nothing.
  return Math.ceil(texts.reduce((sum, t) => sum + t.length, 0) / 4);
}
