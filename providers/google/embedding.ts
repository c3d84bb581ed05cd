/** Gemini embeddings through `:batchEmbedContents`, one request entry per input string. */
import type { Connection } from '../connection';
import { upstreamJson, expectShape } from '../http';
import type { CallContext, EmbeddingModelAdapter, EmbeddingRequest, EmbeddingResult } from '../types';
import { modelUrl } from './paths';

/** The API takes at most 100 entries per batch call. */
const MAX_BATCH = 100;

interface BatchEmbedResponse {
  embeddings?: Array<{ values?: number[] }>;
}

export class GoogleEmbeddingModel implements EmbeddingModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doEmbed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    const { providerId } = this.connection;
    const request = this.connection.request(ctx);
    const modelName = `models/${this.model.replace(/^models\//, '')}`;
    const embeddings: number[][] = [];
    // Batches run one after another so a large input does not burst the per-minute quota.
    for (let start = 0; start < req.input.length; start += MAX_BATCH) {
      const batch = req.input.slice(start, start + MAX_BATCH);
      const requests = batch.map((text) => ({
        model: modelName,
        content: { parts: [{ text }] },
        ...(req.dimensions !== undefined ? { outputDimensionality: req.dimensions } : {}),
      }));
      const answer = await upstreamJson<BatchEmbedResponse>(providerId, modelUrl(this.connection, this.model, 'batchEmbedContents'), {
        ...request, json: { requests },
      });
      const vectors = answer.body?.embeddings;
      expectShape(providerId, Array.isArray(vectors) && vectors.length === batch.length, 'embeddings do not match the inputs');
      for (const vector of vectors) {
        expectShape(providerId, Array.isArray(vector?.values), 'embedding without values');
        embeddings.push(vector.values!);
      }
    }
    return { embeddings, usage: { inputTokens: estimateTokens(req.input) } };
  }
}

/**
 * Gemini reports no token usage for embeddings, so we estimate it at about four characters per token
 * (Google's own rule of thumb for its tokenizer) to meter the call.
 */
export function estimateTokens(inputs: string[]): number {
  return inputs.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
}
