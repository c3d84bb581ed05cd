/**
 * Anthropic's Message Batches API: the requests are made one batch (`POST /v1/messages/batches`, each
 * `{custom_id, params}` the Messages body the synchronous call sends), read (`GET .../{id}`), cancelled
 * (`POST .../{id}/cancel`), and its results read back (`GET .../{id}/results`, JSONL), each answer read as a
 * synchronous call's. Only the client's own Messages requests are sent (never a translated chat request,
 * whose JSON mode needs the synchronous call's reading of the answer).
 */
import { UpstreamError } from '../../core/errors';
import type { Connection } from '../connection';
import { batchResultLines, classifyHttpFailure, expectShape, upstreamBytes, upstreamJson } from '../http';
import type { CallContext, ChatRequest, NativeBatches, NativeBatchOutcome, NativeBatchRequest, NativeBatchState } from '../types';
import { parseMessagesResponse } from './response';

const BATCHES_PATH = '/v1/messages/batches';

/** The HTTP status each of Anthropic's error types is answered with. */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400, authentication_error: 401, permission_error: 403, not_found_error: 404,
  request_too_large: 413, rate_limit_error: 429, api_error: 500, overloaded_error: 529,
};

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export class AnthropicBatches implements NativeBatches {
  readonly urls = ['/v1/messages'];

  constructor(private readonly connection: Connection) {}

  chatBody(upstreamModel: string, req: ChatRequest): Record<string, unknown> {
    if (!req.anthropicMessages || req.anthropicMessages.beta) {
      throw new UpstreamError(`${this.connection.providerId} batches take Messages requests as they came, without beta flags`, { kind: 'caller_error', provider: this.connection.providerId });
    }
    const { stream: _stream, ...body } = req.anthropicMessages.body;
    return { ...body, model: upstreamModel };
  }

  /** Anthropic keeps no metadata on a message batch, so no `findTagged`: the activity keeps the id as soon as it has it. */
  async submit(requests: NativeBatchRequest[], _tag: string, ctx: CallContext): Promise<string> {
    const provider = this.connection.providerId;
    const { body } = await upstreamJson(provider, this.connection.url(BATCHES_PATH), this.connection.request(ctx, {
      method: 'POST', headers: { 'content-type': 'application/json' }, json: { requests: requests.map((r) => ({ custom_id: r.customId, params: r.body })) },
    }));
    expectShape(provider, isObject(body) && typeof body.id === 'string', 'message batch without an id');
    return body.id as string;
  }

  async state(batchId: string, ctx: CallContext): Promise<NativeBatchState> {
    const provider = this.connection.providerId;
    const { body } = await upstreamJson(provider, this.connection.url(`${BATCHES_PATH}/${encodeURIComponent(batchId)}`), this.connection.request(ctx));
    expectShape(provider, isObject(body) && typeof body.processing_status === 'string', 'message batch without a processing_status');
    if (body.processing_status !== 'ended') return { status: 'running' };
    const counts = isObject(body.request_counts) ? body.request_counts : {};
    const ending = body.cancel_initiated_at ? 'cancelled' : Number(counts.expired ?? 0) > 0 ? 'expired' : 'completed';
    return { status: 'ended', ending, error: null };
  }

  async cancel(batchId: string, ctx: CallContext): Promise<void> {
    await upstreamJson(this.connection.providerId, this.connection.url(`${BATCHES_PATH}/${encodeURIComponent(batchId)}/cancel`), this.connection.request(ctx, { method: 'POST' }));
  }

  async* results(batchId: string, ctx: CallContext): AsyncGenerator<NativeBatchOutcome> {
    const { data } = await upstreamBytes(this.connection.providerId, this.connection.url(`${BATCHES_PATH}/${encodeURIComponent(batchId)}/results`), this.connection.request(ctx));
    for (const line of batchResultLines(this.connection.providerId, data)) yield this.outcome(line);
  }

  /** One results line: `{custom_id, result: {type: succeeded|errored|canceled|expired, message|error}}`. */
  private outcome(line: Json & { custom_id: string }): NativeBatchOutcome {
    const provider = this.connection.providerId;
    expectShape(provider, isObject(line.result), 'message batch result without a result');
    const customId = line.custom_id;
    const result = line.result;
    if (result.type === 'succeeded') {
      return { customId, kind: 'served', result: { ...parseMessagesResponse(provider, result.message, null), anthropicMessage: result.message as Json } };
    }
    if (result.type === 'errored') {
      const error = isObject(result.error) ? result.error : {};
      const type = isObject(error.error) && typeof error.error.type === 'string' ? error.error.type : 'api_error';
      return { customId, kind: 'failed', error: classifyHttpFailure(provider, ERROR_STATUS[type] ?? 500, new Headers(), JSON.stringify(error)) };
    }
    return { customId, kind: 'not_run' };
  }
}
