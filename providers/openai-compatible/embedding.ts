/** `/embeddings`: always asks for floats; the API re-encodes for clients that asked for base64. */
import type { Connection } from '../connection';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, EmbeddingModelAdapter, EmbeddingRequest, EmbeddingResult } from '../types';
import { isFiniteNumber, isObject, tokenCount, type JsonObject } from './shape';

export class OpenAICompatibleEmbeddingModel implements EmbeddingModelAdapter {
  /** The wire format takes arrays of token ids as `input` (which hosts understand them is the catalog's `tokenInput`). */
  readonly tokenInput = true;

  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doEmbed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    const provider = this.connection.providerId;
    const input = req.tokens ?? req.input;
    const json: JsonObject = { model: this.model, input, encoding_format: 'float' };
    if (req.dimensions !== undefined) json.dimensions = req.dimensions;
    const { body } = await upstreamJson(provider, this.connection.url('/embeddings'), this.connection.request(ctx, { json }));
    expectShape(provider, isObject(body) && Array.isArray(body.data), 'embeddings without data');
    const items = body.data as unknown[];
    expectShape(provider, items.every(isEmbeddingItem), 'embedding items are not float vectors with an index');
    expectShape(provider, items.length === input.length, `${items.length} embeddings for ${input.length} inputs`);
    const sorted = [...(items as Array<{ index: number; embedding: number[] }>)].sort((a, b) => a.index - b.index);
    const usage = isObject(body.usage) ? body.usage : {};
    return {
      embeddings: sorted.map((item) => item.embedding),
      usage: { inputTokens: tokenCount(usage.prompt_tokens ?? usage.total_tokens) },
    };
  }
}

function isEmbeddingItem(item: unknown): boolean {
  return isObject(item) && Number.isInteger(item.index) && Array.isArray(item.embedding) && item.embedding.every(isFiniteNumber);
}
