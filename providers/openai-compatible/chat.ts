/** Chat completions, whole answers (`doGenerate`) and streams (`doStream`). */
import type { Connection } from '../connection';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, ChatChoice, ChatModelAdapter, ChatRequest, ChatResult } from '../types';
import { streamChatCompletion } from './chat-stream';
import { chatCompletionBody, contentText, isWireContent, isWireToolCall, mapFinishReason, mapLogprobs, mapToolCall, mapUsage } from './chat-wire';
import { isObject, isOptionalString, type JsonObject } from './shape';

export interface OpenAICompatibleChatSettings {
  maxCompletionTokens: boolean;
  /** Whether the host answers `n` choices in one call. */
  nativeChoices: boolean;
  /** The chat completions path on the host (default `/chat/completions`). */
  path?: string;
}

export class OpenAICompatibleChatModel implements ChatModelAdapter {
  readonly nativeChoices: boolean;

  constructor(
    private readonly connection: Connection,
    private readonly model: string,
    private readonly settings: OpenAICompatibleChatSettings,
  ) {
    this.nativeChoices = settings.nativeChoices;
  }

  async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const provider = this.connection.providerId;
    const { body } = await upstreamJson(provider, this.url, this.connection.request(ctx, { json: this.body(req) }));
    return chatCompletionResult(provider, body);
  }

  /** The request's body on the wire (what doGenerate sends, without `stream`). */
  body(req: ChatRequest): JsonObject {
    return chatCompletionBody(this.model, req, this.settings);
  }

  doStream(req: ChatRequest, ctx: CallContext) {
    return streamChatCompletion(this.connection, this.url, { ...this.body(req), stream: true, stream_options: { include_usage: true } }, ctx);
  }

  private get url(): string {
    return this.connection.url(this.settings.path ?? '/chat/completions');
  }

}

/** A chat completion as the host answered it (a call's answer, or a line of a batch's output). */
export function chatCompletionResult(provider: string, body: unknown): ChatResult {
  expectShape(provider, isObject(body) && Array.isArray(body.choices) && body.choices.length > 0, 'chat completion without choices');
  const choices = [...(body.choices as unknown[])].sort((a, b) => choiceIndex(a) - choiceIndex(b)).map((choice) => toChoice(provider, choice));
  const [first, ...more] = choices;
  return {
    ...first,
    usage: mapUsage(body.usage),
    upstreamId: typeof body.id === 'string' ? body.id : undefined,
    ...(more.length > 0 ? { moreChoices: more } : {}),
  };
}

function choiceIndex(choice: unknown): number {
  return isObject(choice) && typeof choice.index === 'number' ? choice.index : 0;
}

/** One wire choice. */
function toChoice(provider: string, choice: unknown): ChatChoice {
  expectShape(provider, isObject(choice) && isObject(choice.message), 'chat choice without a message');
  const message = choice.message as JsonObject;
  expectShape(provider, isWireContent(message.content) && isOptionalString(message.refusal), 'chat message content is not text');
  const wireToolCalls = message.tool_calls ?? [];
  expectShape(provider, Array.isArray(wireToolCalls) && wireToolCalls.every(isWireToolCall), 'malformed tool calls');
  const logprobs = mapLogprobs(choice.logprobs);
  return {
    // A refusal is the model's answer to the caller, so it is returned as the text when there is no other.
    content: contentText(message.content) ?? (typeof message.refusal === 'string' ? message.refusal : null),
    toolCalls: (wireToolCalls as JsonObject[]).map(mapToolCall),
    finishReason: mapFinishReason(choice.finish_reason),
    ...(logprobs ? { logprobs } : {}),
  };
}
