/** Chat completions, whole answers (`doGenerate`) and streams (`doStream`). */
import type { Connection } from '../connection';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, ChatModelAdapter, ChatRequest, ChatResult } from '../types';
import { streamChatCompletion } from './chat-stream';
import { chatCompletionBody, contentText, isWireContent, isWireToolCall, mapFinishReason, mapToolCall, mapUsage } from './chat-wire';
import { isObject, isOptionalString, type JsonObject } from './shape';

export class OpenAICompatibleChatModel implements ChatModelAdapter {
  constructor(
    private readonly connection: Connection,
    private readonly model: string,
    private readonly settings: { maxCompletionTokens: boolean },
  ) {}

  async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const provider = this.connection.providerId;
    const { body } = await upstreamJson(provider, this.connection.url('/chat/completions'), this.connection.request(ctx, { json: this.body(req) }));
    expectShape(provider, isObject(body) && Array.isArray(body.choices) && body.choices.length > 0, 'chat completion without choices');
    const choice = body.choices[0];
    expectShape(provider, isObject(choice) && isObject(choice.message), 'chat choice without a message');
    const message = choice.message as JsonObject;
    expectShape(provider, isWireContent(message.content) && isOptionalString(message.refusal), 'chat message content is not text');
    const wireToolCalls = message.tool_calls ?? [];
    expectShape(provider, Array.isArray(wireToolCalls) && wireToolCalls.every(isWireToolCall), 'malformed tool calls');
    return {
      // A refusal is the model's answer to the caller, so it is returned as the text when there is no other.
      content: contentText(message.content) ?? (typeof message.refusal === 'string' ? message.refusal : null),
      toolCalls: (wireToolCalls as JsonObject[]).map(mapToolCall),
      finishReason: mapFinishReason(choice.finish_reason),
      usage: mapUsage(body.usage),
      upstreamId: typeof body.id === 'string' ? body.id : undefined,
    };
  }

  doStream(req: ChatRequest, ctx: CallContext) {
    return streamChatCompletion(this.connection, { ...this.body(req), stream: true, stream_options: { include_usage: true } }, ctx);
  }

  private body(req: ChatRequest): JsonObject {
    return chatCompletionBody(this.model, req, this.settings);
  }
}
