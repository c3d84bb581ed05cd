/** The Messages API chat adapter: one POST to `/v1/messages`, plain or streamed. */
import { readSse, upstreamFetch, upstreamJson } from '../http';
import type { CallContext, ChatModelAdapter, ChatRequest, ChatResult, ChatStreamPart } from '../types';
import { buildMessagesRequest } from './request';
import { parseMessagesResponse } from './response';
import { translateStream } from './stream';

export interface AnthropicEndpoint {
  provider: string;
  url: string;
  /** Throws `not_configured` when the provider has no key; called per request. */
  headers(): Record<string, string>;
  timeoutMs(ctx: CallContext): number | undefined;
  defaultMaxTokens: number;
}

export function createAnthropicChat(endpoint: AnthropicEndpoint, model: string): ChatModelAdapter {
  const { provider, url } = endpoint;
  return {
    async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
      const headers = endpoint.headers();
      const { body, jsonTool } = buildMessagesRequest(model, req, endpoint.defaultMaxTokens);
      const answer = await upstreamJson(provider, url, { json: body, headers, signal: ctx.signal, timeoutMs: endpoint.timeoutMs(ctx) });
      return parseMessagesResponse(provider, answer.body, jsonTool);
    },

    async *doStream(req: ChatRequest, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
      const headers = endpoint.headers();
      const { body, jsonTool } = buildMessagesRequest(model, req, endpoint.defaultMaxTokens);
      const timeoutMs = endpoint.timeoutMs(ctx);
      const { response, done, endDeadline } = await upstreamFetch(provider, url, {
        json: { ...body, stream: true }, headers: { ...headers, accept: 'text/event-stream' }, signal: ctx.signal, timeoutMs,
      });
      // The attempt deadline covers the first byte; afterwards silence is bounded by the idle timeout,
      // and the caller's signal still cancels the body.
      endDeadline();
      try {
        yield* translateStream(provider, readSse(provider, response, { idleTimeoutMs: timeoutMs, signal: ctx.signal }), jsonTool);
      } finally {
        done();
      }
    },
  };
}
