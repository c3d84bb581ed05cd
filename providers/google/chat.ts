/** The Gemini chat adapter: `:generateContent`, and `:streamGenerateContent?alt=sse` for streams. */
import { UpstreamError } from '../../core/errors';
import type { Connection } from '../connection';
import { classifyHttpFailure, parseSseJson, readSse, upstreamJson, upstreamStream } from '../http';
import type { CallContext, ChatModelAdapter, ChatRequest, ChatResult, ChatStreamPart, FinishReason } from '../types';
import { buildGenerateContentRequest } from './chat-request';
import { mapFinishReason, parseGenerateContentResponse, toTokenUsage, toToolCall } from './chat-response';
import { modelUrl } from './paths';
import type { GeminiGenerateContentResponse, GeminiUsageMetadata } from './wire';

export class GoogleChatModel implements ChatModelAdapter {
  /**
   * `url` addresses one of the model's methods; by default on the Gemini API (`/v1beta/models/{id}:{method}`),
   * Vertex AI passes its own (`.../publishers/google/models/{id}:{method}`), the wire format being the same.
   */
  constructor(
    private readonly connection: Connection,
    private readonly model: string,
    private readonly url: (method: string) => string = (method) => modelUrl(connection, model, method),
  ) {}

  async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const { providerId } = this.connection;
    const request = this.connection.request(ctx);
    const body = buildGenerateContentRequest(this.model, req);
    const answer = await upstreamJson(providerId, this.url('generateContent'), { ...request, json: body });
    return parseGenerateContentResponse(providerId, answer.body);
  }

  async *doStream(req: ChatRequest, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
    const { providerId } = this.connection;
    const request = this.connection.request(ctx, { headers: { accept: 'text/event-stream' } });
    const body = buildGenerateContentRequest(this.model, req);
    const url = `${this.url('streamGenerateContent')}?alt=sse`;
    const { body: answer, done, endDeadline } = await upstreamStream(providerId, url, { ...request, json: body });
    // The attempt deadline covers the first byte; afterwards silence is bounded by the idle timeout,
    // and the caller's signal still cancels the body.
    endDeadline();
    try {
      yield* translateGeminiStream(providerId, answer, request.timeoutMs, ctx);
    } finally {
      done();
    }
  }
}

async function* translateGeminiStream(provider: string, answer: AsyncIterable<Uint8Array>, timeoutMs: number | undefined, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
  let toolCount = 0;
  let finishReason: string | undefined;
  let blocked = false;
  let usage: GeminiUsageMetadata | undefined;
  for await (const event of readSse(provider, answer, { idleTimeoutMs: timeoutMs, signal: ctx.signal })) {
    const chunk = parseSseJson<GeminiGenerateContentResponse>(provider, event.data);
    if (chunk.error) throw classifyHttpFailure(provider, chunk.error.code ?? 500, new Headers(), event.data);
    if (chunk.usageMetadata) usage = chunk.usageMetadata; // cumulative: the last one counts
    if (chunk.promptFeedback?.blockReason) blocked = true;
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (typeof part.text === 'string' && part.text !== '' && !part.thought) yield { type: 'text-delta', delta: part.text };
      if (part.functionCall) {
        // Gemini sends each function call whole, never split across chunks.
        const index = toolCount++;
        const call = toToolCall(provider, chunk.responseId, index, part);
        yield { type: 'tool-call-delta', index, id: call.id, name: call.function.name, argumentsDelta: call.function.arguments };
      }
    }
    if (candidate?.finishReason) finishReason = candidate.finishReason;
  }
  if (!finishReason && !blocked) throw new UpstreamError(`${provider} ended the stream before it was complete`, { kind: 'bad_response', provider });
  const reason: FinishReason = finishReason ? mapFinishReason(finishReason, toolCount > 0) : 'content_filter';
  yield { type: 'finish', finishReason: reason, usage: toTokenUsage(usage) };
}
