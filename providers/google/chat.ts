/** The Gemini chat adapter: `:generateContent`, and `:streamGenerateContent?alt=sse` for streams. */
import { UpstreamError } from '../../core/errors';
import { classifyHttpFailure, parseSseJson, readSse, upstreamFetch, upstreamJson } from '../http';
import type { CallContext, ChatModelAdapter, ChatRequest, ChatResult, ChatStreamPart, FinishReason } from '../types';
import { buildGenerateContentRequest } from './chat-request';
import { mapFinishReason, parseGenerateContentResponse, toTokenUsage, toToolCall } from './chat-response';
import type { GoogleEndpoint } from './endpoint';
import type { GeminiGenerateContentResponse, GeminiUsageMetadata } from './wire';

export function createGoogleChat(endpoint: GoogleEndpoint, model: string): ChatModelAdapter {
  const { provider } = endpoint;
  return {
    async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
      const headers = endpoint.headers();
      const body = buildGenerateContentRequest(model, req);
      const answer = await upstreamJson(provider, endpoint.modelUrl(model, 'generateContent'), {
        json: body, headers, signal: ctx.signal, timeoutMs: endpoint.timeoutMs(ctx),
      });
      return parseGenerateContentResponse(provider, answer.body);
    },

    async *doStream(req: ChatRequest, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
      const headers = endpoint.headers();
      const body = buildGenerateContentRequest(model, req);
      const timeoutMs = endpoint.timeoutMs(ctx);
      const { response, done, endDeadline } = await upstreamFetch(provider, `${endpoint.modelUrl(model, 'streamGenerateContent')}?alt=sse`, {
        json: body, headers: { ...headers, accept: 'text/event-stream' }, signal: ctx.signal, timeoutMs,
      });
      // The attempt deadline covers the first byte; afterwards silence is bounded by the idle timeout,
      // and the caller's signal still cancels the body.
      endDeadline();
      try {
        yield* translateGeminiStream(provider, response, timeoutMs, ctx);
      } finally {
        done();
      }
    },
  };
}

async function* translateGeminiStream(provider: string, response: Response, timeoutMs: number | undefined, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
  let toolCount = 0;
  let finishReason: string | undefined;
  let blocked = false;
  let usage: GeminiUsageMetadata | undefined;
  for await (const event of readSse(provider, response, { idleTimeoutMs: timeoutMs, signal: ctx.signal })) {
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
