/** `POST /v1/embeddings` as an endpoint handler. */
import { validateModelParams } from '../../catalog/params';
import { embeddingCost } from '../../catalog/pricing';
import type { ModelRecord } from '../../catalog/types';
import { embeddingInputs, type EmbeddingsBody } from './body';
import { estimateTokens } from '../chat/tokens';
import { InvalidRequestError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import type { EndpointHandler } from '../types';
import { modelAdapter } from '../model-adapter';

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

/** Token ids mean something only to the tokenizer they came from: models whose record says they take them. */
function tokenInputUnsupported(record: ModelRecord): InvalidRequestError {
  return new InvalidRequestError(
    `Model '${record.slug}' takes text only; token ids are read by the models that tokenize as they were made (OpenAI's text-embedding models, sim-embed). Send the text.`,
    { param: 'input', code: 'token_input_not_supported_by_model' },
  );
}

/** Tokens in the input: counted exactly for token ids, estimated generously (3 chars a token) for text. */
function inputTokenEstimate(body: EmbeddingsBody): number {
  const inputs = embeddingInputs(body);
  if ('tokens' in inputs) return inputs.tokens.reduce((n, ids) => n + ids.length, 0);
  return Math.ceil(inputs.texts.reduce((n, s) => n + s.length, 0) / 3) + inputs.texts.length;
}

export const embeddingsHandler: EndpointHandler<EmbeddingsBody> = {
  endpoint: 'embeddings',
  modality: 'embedding',

  check(record, body) {
    if ('tokens' in embeddingInputs(body) && !record.capabilities.tokenInput) throw tokenInputUnsupported(record);
    validateModelParams(record, modelParams(body));
  },

  estimate(record, body) {
    // Generous so the settlement only ever gives back.
    return embeddingCost(record, { inputTokens: inputTokenEstimate(body) });
  },

  async call(record, body, env) {
    const adapter = modelAdapter(env, record, 'embedding');
    const inputs = embeddingInputs(body);
    if ('tokens' in inputs && !adapter.tokenInput) throw tokenInputUnsupported(record);
    const request = 'tokens' in inputs ? { input: [], tokens: inputs.tokens } : { input: inputs.texts };
    const result = await adapter.doEmbed({ ...request, dimensions: body.dimensions }, { requestId: env.requestId, simulate: env.simulate, signal: env.signal });
    const inputTokens = result.usage.inputTokens > 0
      ? result.usage.inputTokens
      : 'tokens' in inputs ? inputTokenEstimate(body) : estimateTokens(inputs.texts.reduce((n, s) => n + s.length, 0));
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
