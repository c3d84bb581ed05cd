/**
 * Cohere embeddings: `POST /v2/embed` with float vectors requested explicitly. Cohere takes at most 96
 * texts a call, so larger inputs go out in consecutive batches that share the call's deadline.
 */
import type { Connection } from '../connection';
import { embedInBatches } from '../embedding-batches';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, EmbeddingModelAdapter, EmbeddingRequest, EmbeddingResult } from '../types';

const MAX_TEXTS_PER_CALL = 96;

interface CohereEmbedResponse {
  embeddings?: { float?: unknown };
  meta?: { billed_units?: { input_tokens?: unknown } };
}

export class CohereEmbeddingModel implements EmbeddingModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doEmbed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    const { providerId } = this.connection;
    return embedInBatches(this.connection, ctx, req.input, MAX_TEXTS_PER_CALL, async (texts, request) => {
      const { body } = await upstreamJson<CohereEmbedResponse>(providerId, this.connection.url('/v2/embed'), {
        ...request,
        json: {
          model: this.model,
          texts,
          // Our endpoint does not say what the text is for; documents are the common case (indexing).
          input_type: 'search_document',
          embedding_types: ['float'],
          ...(req.dimensions !== undefined ? { output_dimension: req.dimensions } : {}),
        },
      });
      const vectors = body?.embeddings?.float;
      expectShape(providerId, isVectorList(vectors, texts.length), 'embeddings.float does not hold one vector per text');
      return { embeddings: vectors, inputTokens: billedTokens(body, texts) };
    });
  }
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
