/** The Messages API chat adapter: one POST to `/v1/messages`, plain or streamed. */
import type { Connection } from '../connection';
import { readSse, upstreamJson, upstreamStream } from '../http';
import type { CallContext, ChatModelAdapter, ChatRequest, ChatResult, ChatStreamPart } from '../types';
import { buildMessagesRequest } from './request';
import { parseMessagesResponse } from './response';
import { translateStream } from './stream';

const MESSAGES_PATH = '/v1/messages';

export class AnthropicChatModel implements ChatModelAdapter {
  constructor(
    private readonly connection: Connection,
    private readonly model: string,
    private readonly settings: { defaultMaxTokens: number },
  ) {}

  async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const { providerId } = this.connection;
    const request = this.connection.request(ctx, { headers: { 'content-type': 'application/json' } });
    const { body, jsonTool } = buildMessagesRequest(this.model, req, this.settings.defaultMaxTokens);
    const answer = await upstreamJson(providerId, this.connection.url(MESSAGES_PATH), { ...request, json: body });
    return parseMessagesResponse(providerId, answer.body, jsonTool);
  }

  async *doStream(req: ChatRequest, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
    const { providerId } = this.connection;
    const request = this.connection.request(ctx, { headers: { 'content-type': 'application/json', accept: 'text/event-stream' } });
    const { body, jsonTool } = buildMessagesRequest(this.model, req, this.settings.defaultMaxTokens);
    const { body: answer, done, endDeadline } = await upstreamStream(providerId, this.connection.url(MESSAGES_PATH), { ...request, json: { ...body, stream: true } });
    // The attempt deadline covers the first byte; afterwards silence is bounded by the idle timeout,
    // and the caller's signal still cancels the body.
    endDeadline();
    try {
      yield* translateStream(providerId, readSse(providerId, answer, { idleTimeoutMs: request.timeoutMs, signal: ctx.signal }), jsonTool);
    } finally {
      done();
    }
  }
}
