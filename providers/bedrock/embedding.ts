/**
 * Embeddings on Bedrock through InvokeModel, in each model's own body: Titan Text Embeddings take one text a
 * call (`inputText`, optional `dimensions`), Cohere Embed up to 96 (`texts`, `input_type`). Bedrock counts
 * the input tokens of every call in its `x-amzn-bedrock-input-token-count` header.
 */
import { InvokeModelCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { InvalidRequestError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape } from '../http';
import type { CallContext, EmbeddingModelAdapter, EmbeddingRequest, EmbeddingResult } from '../types';
import { startCall } from './call';

const COHERE_TEXTS_PER_CALL = 96;
/** Titan calls made side by side for one request of many texts. */
const TITAN_CONCURRENCY = 8;
const TOKEN_COUNT_HEADER = 'x-amzn-bedrock-input-token-count';

type Body = Record<string, unknown>;

export class BedrockEmbeddingModel implements EmbeddingModelAdapter {
  constructor(
    private readonly connection: Connection,
    private readonly client: () => BedrockRuntimeClient,
    private readonly model: string,
  ) {}

  async doEmbed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    const kind = /(^|\.)cohere\.embed-/.test(this.model) ? 'cohere' : /(^|\.)amazon\.titan-embed-/.test(this.model) ? 'titan' : undefined;
    if (!kind) throw new InvalidRequestError(`Bedrock model ${this.model} has no embedding body format known to this gateway (Titan and Cohere Embed are)`, { param: 'model', code: 'model_not_supported' });
    // One deadline and one cancellation for every call the request takes.
    const call = startCall(this.connection, ctx);
    try {
      const batches: string[][] = kind === 'cohere'
        ? chunk(req.input, COHERE_TEXTS_PER_CALL)
        : req.input.map((text) => [text]);
      const results: Array<{ embeddings: number[][]; inputTokens: number }> = [];
      for (const group of chunk(batches, kind === 'titan' ? TITAN_CONCURRENCY : 1)) {
        results.push(...await Promise.all(group.map((texts) => kind === 'cohere'
          ? this.cohere(texts, call.signal)
          : this.titan(texts[0], req.dimensions, call.signal))));
      }
      return { embeddings: results.flatMap((r) => r.embeddings), usage: { inputTokens: results.reduce((sum, r) => sum + r.inputTokens, 0) } };
    } catch (err) {
      throw call.failure(err);
    } finally {
      call.done();
    }
  }

  private async titan(text: string, dimensions: number | undefined, signal: AbortSignal) {
    const { body, tokens } = await this.invoke({ inputText: text, ...(dimensions !== undefined ? { dimensions } : {}) }, signal);
    const vector = body.embedding;
    expectShape(this.connection.providerId, isVector(vector), 'no embedding vector');
    const counted = typeof body.inputTextTokenCount === 'number' ? body.inputTextTokenCount : undefined;
    return { embeddings: [vector], inputTokens: tokens ?? counted ?? estimateTokens([text]) };
  }

  private async cohere(texts: string[], signal: AbortSignal) {
    // Our endpoint does not say what the text is for; documents are the common case (indexing).
    const { body, tokens } = await this.invoke({ texts, input_type: 'search_document', embedding_types: ['float'] }, signal);
    const embeddings = body.embeddings as unknown;
    const vectors = Array.isArray(embeddings) ? embeddings : (embeddings as { float?: unknown } | undefined)?.float;
    expectShape(this.connection.providerId, Array.isArray(vectors) && vectors.length === texts.length && vectors.every(isVector), 'embeddings do not hold one vector per text');
    return { embeddings: vectors as number[][], inputTokens: tokens ?? estimateTokens(texts) };
  }

  /** One InvokeModel call: the answer's JSON body and the input tokens Bedrock counted. */
  private async invoke(json: Body, abortSignal: AbortSignal): Promise<{ body: Body; tokens: number | undefined }> {
    const command = new InvokeModelCommand({ modelId: this.model, contentType: 'application/json', accept: 'application/json', body: JSON.stringify(json) });
    let tokens: number | undefined;
    // The count travels only in a header, which the command's output leaves out.
    command.middlewareStack.add((next) => async (args) => {
      const result = await next(args);
      const header = (result.response as { headers?: Record<string, string> }).headers?.[TOKEN_COUNT_HEADER];
      if (header !== undefined && /^\d+$/.test(header)) tokens = Number(header);
      return result;
    }, { step: 'deserialize', name: 'bedrockInputTokenCount' });
    const output = await this.client().send(command, { abortSignal });
    let body: unknown;
    try {
      body = JSON.parse(output.body.transformToString('utf8'));
    } catch {
      body = undefined;
    }
    expectShape(this.connection.providerId, !!body && typeof body === 'object', 'the body is not a JSON object');
    return { body: body as Body, tokens };
  }
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function isVector(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.every((x) => typeof x === 'number');
}

/** Without Bedrock's count, a rough four characters a token rather than nothing. */
function estimateTokens(texts: string[]): number {
  return Math.ceil(texts.reduce((sum, t) => sum + t.length, 0) / 4);
}
