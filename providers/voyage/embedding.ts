/**
 * Voyage embeddings: `POST /v1/embeddings`, answered OpenAI-style with `data[].embedding` tagged by
 * `index`. Voyage caps both texts and tokens per call, so larger inputs go out in consecutive batches
 * that share the call's deadline.
 */
import type { Connection } from '../connection';
import { embedInBatches } from '../embedding-batches';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, EmbeddingModelAdapter, EmbeddingRequest, EmbeddingResult } from '../types';

/** Well under Voyage's 1000-text limit, so a batch of long texts stays under its per-call token limit too. */
const MAX_TEXTS_PER_CALL = 128;

interface VoyageEmbeddingsResponse {
  data?: unknown;
  usage?: { total_tokens?: unknown };
}

interface VoyageEmbedding {
  embedding: number[];
  index: number;
}

export class VoyageEmbeddingModel implements EmbeddingModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doEmbed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    const { providerId } = this.connection;
    return embedInBatches(this.connection, ctx, req.input, MAX_TEXTS_PER_CALL, async (input, request) => {
      const { body } = await upstreamJson<VoyageEmbeddingsResponse>(providerId, this.connection.url('/v1/embeddings'), {
        ...request,
        json: { input, model: this.model, ...(req.dimensions !== undefined ? { output_dimension: req.dimensions } : {}) },
      });
      const data = body?.data;
      expectShape(providerId, isEmbeddingList(data, input.length), 'data does not hold one embedding per input');
      return { embeddings: [...data].sort((a, b) => a.index - b.index).map((d) => d.embedding), inputTokens: usedTokens(body, input) };
    });
  }
}

/** One entry per input, each index used exactly once, each embedding a non-empty list of numbers. */
function isEmbeddingList(value: unknown, count: number): value is VoyageEmbedding[] {
  if (!Array.isArray(value) || value.length !== count) return false;
  const seen = new Set<number>();
  for (const item of value) {
    if (!item || typeof item !== 'object') return false;
    const { embedding, index } = item as Record<string, unknown>;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || seen.has(index)) return false;
    if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number')) return false;
    seen.add(index);
  }
  return true;
}

function usedTokens(body: VoyageEmbeddingsResponse, input: string[]): number {
  const total = body.usage?.total_tokens;
  if (typeof total === 'number' && Number.isFinite(total) && total >= 0) return total;
  // Without Voyage's count, bill a rough four characters a token rather than nothing.
  return Math.ceil(input.reduce((sum, t) => sum + t.length, 0) / 4);
}
