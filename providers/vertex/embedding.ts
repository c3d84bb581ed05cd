/**
 * Vertex AI text embeddings (`text-embedding-005`, `gemini-embedding-001`, ...) through the model's `:predict`:
 * one instance per text; each prediction carries its vector and the tokens it counted.
 */
import type { Connection } from '../connection';
import { embedInBatches } from '../embedding-batches';
import { expectShape, upstreamJson } from '../http';
import { estimateTokens } from '../google/embedding';
import type { CallContext, EmbeddingModelAdapter, EmbeddingRequest, EmbeddingResult } from '../types';

interface PredictResponse {
  predictions?: Array<{ embeddings?: { values?: number[]; statistics?: { token_count?: number; truncated?: boolean } } }>;
}

/** Instances per `:predict` call: Gemini embedding models take one, the text-embedding models up to 250. */
export function embeddingBatchSize(model: string): number {
  return /^gemini-embedding/.test(model) ? 1 : 250;
}

export class VertexEmbeddingModel implements EmbeddingModelAdapter {
  /** `url` is the model's `:predict` address (publisher `google`, the provider's project and location). */
  constructor(private readonly connection: Connection, private readonly model: string, private readonly url: string) {}

  doEmbed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    const { providerId } = this.connection;
    return embedInBatches(this.connection, ctx, req.input, embeddingBatchSize(this.model), async (texts, request) => {
      const json = {
        instances: texts.map((content) => ({ content })),
        ...(req.dimensions !== undefined ? { parameters: { outputDimensionality: req.dimensions } } : {}),
      };
      const answer = await upstreamJson<PredictResponse>(providerId, this.url, { ...request, json });
      const predictions = answer.body?.predictions;
      expectShape(providerId, Array.isArray(predictions) && predictions.length === texts.length, 'predictions do not match the inputs');
      let inputTokens = 0;
      const embeddings = predictions.map((prediction, i) => {
        const values = prediction?.embeddings?.values;
        expectShape(providerId, Array.isArray(values), 'prediction without embedding values');
        // Vertex counts each text's tokens; an answer without the count is metered by estimate.
        const counted = prediction.embeddings?.statistics?.token_count;
        inputTokens += typeof counted === 'number' ? counted : estimateTokens([texts[i]]);
        return values;
      });
      return { embeddings, inputTokens };
    });
  }
}
