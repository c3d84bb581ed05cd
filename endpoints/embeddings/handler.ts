/** `POST /v1/embeddings` as an endpoint handler. */
import { validateModelParams } from '../../catalog/params';
import { embeddingCost } from '../../catalog/pricing';
import type { EmbeddingsBody } from './body';
import { estimateTokens } from '../chat/tokens';
import { microToCredits } from '../../core/money';
import type { EndpointHandler } from '../types';
import { modelAdapter } from '../model-adapter';

function inputs(body: EmbeddingsBody): string[] {
  return typeof body.input === 'string' ? [body.input] : body.input;
}

function modelParams(body: EmbeddingsBody): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  if (body.encoding_format !== undefined) params.encoding_format = body.encoding_format;
  if (body.dimensions !== undefined) params.dimensions = body.dimensions;
  return params;
}

/** float32 little-endian bytes, base64: what OpenAI returns for `encoding_format: "base64"`. */
export function encodeBase64Floats(vector: number[]): string {
  const buffer = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => buffer.writeFloatLE(v, i * 4));
  return buffer.toString('base64');
}

export const embeddingsHandler: EndpointHandler<EmbeddingsBody> = {
  endpoint: 'embeddings',
  modality: 'embedding',

  check(record, body) {
    validateModelParams(record, modelParams(body));
  },

  estimate(record, body) {
    // Generous (3 chars a token) so the settlement only ever gives back.
    const chars = inputs(body).reduce((n, s) => n + s.length, 0);
    return embeddingCost(record, { inputTokens: Math.ceil(chars / 3) + inputs(body).length });
  },

  async call(record, body, env) {
    const adapter = modelAdapter(env.providers, record, 'embedding');
    const texts = inputs(body);
    const result = await adapter.doEmbed({ input: texts, dimensions: body.dimensions }, { requestId: env.requestId, simulate: env.simulate, signal: env.signal });
    const inputTokens = result.usage.inputTokens > 0 ? result.usage.inputTokens : estimateTokens(texts.reduce((n, s) => n + s.length, 0));
    const chargeMicro = embeddingCost(record, { inputTokens });
    const base64 = body.encoding_format === 'base64';
    return {
      response: {
        kind: 'json',
        body: {
          object: 'list',
          data: result.embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding: base64 ? encodeBase64Floats(embedding) : embedding })),
          model: record.slug,
          usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
          credits_used: microToCredits(chargeMicro),
        },
      },
      chargeMicro,
      usage: { inputTokens, outputTokens: 0 },
    };
  },
};
