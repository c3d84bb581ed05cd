/**
 * How a streamed chat answer reaches the client. One stream activity serves every endpoint that streams a
 * chat model's answer (chat completions, Responses); each endpoint's writer turns the adapter's stream
 * parts into its own wire format's events.
 */
import type { Knex } from 'knex';
import type { GatewayError } from '../core/errors';
import type { ChatRequest, ChatStreamPart, FinishReason, TokenUsage } from '../providers/types';
import type { ChatCompletionBody } from './chat/body';
import type { ModelRecord } from '../catalog/types';

export interface StreamWriterContext {
  requestId: string;
  /** Unix seconds the request was accepted. */
  created: number;
  /** The model serving this hop. */
  model: string;
  /** Writes one server-sent event (`data: <json>`, after `event: <name>` when named). */
  send(data: unknown, event?: string): void;
  /** For writers that keep what they answered (stored Responses). */
  db?: Knex;
  workspaceId?: string;
}

export interface ChatStreamWriter {
  /** The first events, once the 200 is committed. */
  open(): void;
  part(part: Exclude<ChatStreamPart, { type: 'finish' }>): void;
  /**
   * The answer is complete: its closing events, with the usage it is billed on and the charge. Never throws.
   * `finishReasons`: every choice's reason by index when the request asked for several choices.
   */
  finish(end: { finishReason: FinishReason; finishReasons?: FinishReason[]; usage: TokenUsage; chargeMicro: number }): Promise<void>;
  /** The upstream broke after the first byte. */
  fail(error: GatewayError): void;
  /** The very last bytes of a stream that was not cut off by the client. */
  close(): void;
}

/** An endpoint whose answers are streamed chat: the chat request its body asks, and its writer. */
export interface ChatStreamFormat<Body = any> {
  /** The chat request the body asks of the model serving this hop. */
  chatBody(body: Body, record: ModelRecord): ChatCompletionBody;
  /** What the endpoint adds to the chat request for this model (the client's own request, for one that speaks its wire). */
  chatRequest?(body: Body, record: ModelRecord): Partial<ChatRequest>;
  writer(body: Body, ctx: StreamWriterContext): ChatStreamWriter;
}
