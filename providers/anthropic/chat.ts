/** The Messages API chat adapter: one POST to `/v1/messages`, plain or streamed. */
import type { Connection } from '../connection';
import { readSse, upstreamJson, upstreamStream } from '../http';
import type { CallContext, ChatModelAdapter, ChatRequest, ChatResult, ChatStreamPart } from '../types';
import { buildMessagesRequest } from './request';
import { parseMessagesResponse } from './response';
import { translateStream } from './stream';

const MESSAGES_PATH = '/v1/messages';

/** Where a Messages request goes and the body it takes there (Anthropic's own API, or a cloud that hosts the models). */
export interface MessagesEndpoint {
  url(stream: boolean): string;
  /** The Messages API body (with `model`) as this endpoint takes it. */
  body(body: Record<string, unknown>, stream: boolean): Record<string, unknown>;
}

/** Anthropic's own API: `POST /v1/messages`, `stream: true` in the body for a stream. */
export function messagesApi(connection: Connection): MessagesEndpoint {
  return {
    url: () => connection.url(MESSAGES_PATH),
    body: (body, stream) => (stream ? { ...body, stream: true } : body),
  };
}

export class AnthropicChatModel implements ChatModelAdapter {
  private readonly endpoint: MessagesEndpoint;

  constructor(
    private readonly connection: Connection,
    private readonly model: string,
    private readonly settings: { defaultMaxTokens: number; endpoint?: MessagesEndpoint },
  ) {
    this.endpoint = settings.endpoint ?? messagesApi(connection);
  }

  async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const { providerId } = this.connection;
    const request = this.connection.request(ctx, { headers: this.headers(req, 'application/json') });
    const { body, jsonTool } = this.body(req);
    const answer = await upstreamJson(providerId, this.endpoint.url(false), { ...request, json: this.endpoint.body(body, false) });
    const result = parseMessagesResponse(providerId, answer.body, jsonTool);
    return req.anthropicMessages ? { ...result, anthropicMessage: answer.body as Record<string, unknown> } : result;
  }

  async *doStream(req: ChatRequest, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
    const { providerId } = this.connection;
    const request = this.connection.request(ctx, { headers: this.headers(req, 'text/event-stream') });
    const { body, jsonTool } = this.body(req);
    const { body: answer, done, endDeadline } = await upstreamStream(providerId, this.endpoint.url(true), { ...request, json: this.endpoint.body(body, true) });
    // The attempt deadline covers the first byte; afterwards silence is bounded by the idle timeout,
    // and the caller's signal still cancels the body.
    endDeadline();
    try {
      yield* translateStream(providerId, readSse(providerId, answer, { idleTimeoutMs: request.timeoutMs, signal: ctx.signal }), jsonTool, { passEvents: Boolean(req.anthropicMessages) });
    } finally {
      done();
    }
  }

  /** The client's own Messages request when there is one (the model set to this one's id), else the translation of the chat request. */
  private body(req: ChatRequest): { body: Record<string, unknown>; jsonTool: ReturnType<typeof buildMessagesRequest>['jsonTool'] } {
    if (req.anthropicMessages) {
      const { stream: _stream, ...body } = req.anthropicMessages.body;
      return { body: { ...body, model: this.model }, jsonTool: null };
    }
    const built = buildMessagesRequest(this.model, req, this.settings.defaultMaxTokens);
    return { body: built.body as unknown as Record<string, unknown>, jsonTool: built.jsonTool };
  }

  private headers(req: ChatRequest, accept: string): Record<string, string> {
    const beta = req.anthropicMessages?.beta;
    return { 'content-type': 'application/json', ...(accept === 'text/event-stream' ? { accept } : {}), ...(beta ? { 'anthropic-beta': beta } : {}) };
  }
}
