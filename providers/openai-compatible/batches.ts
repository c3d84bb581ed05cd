/**
 * OpenAI's Batch API, for chat completions: the requests go up as a JSONL file (`POST /files`, purpose
 * `batch`), the batch is made on it (`POST /batches`), read (`GET /batches/{id}`), cancelled
 * (`POST /batches/{id}/cancel`), and its output and error files read back (`GET /files/{id}/content`), each
 * line's answer read as a synchronous call's is.
 */
import { UpstreamError } from '../../core/errors';
import type { Connection } from '../connection';
import { batchResultLines, classifyHttpFailure, expectShape, upstreamBytes, upstreamJson } from '../http';
import type { CallContext, ChatRequest, NativeBatches, NativeBatchOutcome, NativeBatchRequest, NativeBatchState } from '../types';
import { chatCompletionResult, type OpenAICompatibleChatModel } from './chat';
import { isObject, type JsonObject } from './shape';

const CHAT_ENDPOINT = '/v1/chat/completions';
/** The metadata key naming the gateway's batch on the provider's. */
const TAG_KEY = 'gateway_batch_id';
/** How far back a retried submission looks for its batch: pages of the provider's batches, newest first. */
const FIND_PAGES = 5;
const FIND_PAGE_SIZE = 100;

export class OpenAIBatches implements NativeBatches {
  readonly urls = [CHAT_ENDPOINT];

  constructor(private readonly connection: Connection, private readonly chatModel: (upstreamModel: string) => OpenAICompatibleChatModel) {}

  chatBody(upstreamModel: string, req: ChatRequest): Record<string, unknown> {
    return this.chatModel(upstreamModel).body(req);
  }

  async submit(requests: NativeBatchRequest[], tag: string, ctx: CallContext): Promise<string> {
    const provider = this.connection.providerId;
    const jsonl = requests.map((r) => JSON.stringify({ custom_id: r.customId, method: 'POST', url: CHAT_ENDPOINT, body: r.body })).join('\n') + '\n';
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([jsonl], { type: 'application/jsonl' }), `${tag}.jsonl`);
    const { body: file } = await upstreamJson(provider, this.connection.url('/files'), this.connection.request(ctx, { method: 'POST', body: form }));
    expectShape(provider, isObject(file) && typeof file.id === 'string', 'file upload without an id');
    const { body: batch } = await upstreamJson(provider, this.connection.url('/batches'), this.connection.request(ctx, {
      method: 'POST', json: { input_file_id: file.id, endpoint: CHAT_ENDPOINT, completion_window: '24h', metadata: { [TAG_KEY]: tag } },
    }));
    expectShape(provider, isObject(batch) && typeof batch.id === 'string', 'batch without an id');
    return batch.id as string;
  }

  /** `GET /batches` (newest first, `after` the last id of a page), a few pages: the batch whose metadata names `tag`. */
  async findTagged(tag: string, ctx: CallContext): Promise<string | null> {
    const provider = this.connection.providerId;
    let after: string | null = null;
    for (let page = 0; page < FIND_PAGES; page++) {
      const query: URLSearchParams = new URLSearchParams({ limit: String(FIND_PAGE_SIZE), ...(after ? { after } : {}) });
      const { body }: { body: unknown } = await upstreamJson(provider, this.connection.url(`/batches?${query}`), this.connection.request(ctx));
      expectShape(provider, isObject(body) && Array.isArray(body.data), 'batch list without data');
      const batches: JsonObject[] = (body.data as unknown[]).filter(isObject);
      const found = batches.find((b) => isObject(b.metadata) && b.metadata[TAG_KEY] === tag && typeof b.id === 'string');
      if (found) return found.id as string;
      const last: JsonObject | undefined = batches[batches.length - 1];
      if (body.has_more !== true || typeof last?.id !== 'string') return null;
      after = last.id;
    }
    return null;
  }

  async state(batchId: string, ctx: CallContext): Promise<NativeBatchState> {
    const batch = await this.batch(batchId, ctx);
    switch (batch.status) {
      case 'completed': case 'cancelled': case 'expired':
        return { status: 'ended', ending: batch.status, error: null };
      case 'failed':
        return { status: 'ended', ending: 'failed', error: firstError(batch) };
      default:
        return { status: 'running' };
    }
  }

  async cancel(batchId: string, ctx: CallContext): Promise<void> {
    await upstreamJson(this.connection.providerId, this.connection.url(`/batches/${encodeURIComponent(batchId)}/cancel`), this.connection.request(ctx, { method: 'POST' }));
  }

  async* results(batchId: string, ctx: CallContext): AsyncGenerator<NativeBatchOutcome> {
    const batch = await this.batch(batchId, ctx);
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (typeof fileId !== 'string' || !fileId) continue;
      const { data } = await upstreamBytes(this.connection.providerId, this.connection.url(`/files/${encodeURIComponent(fileId)}/content`), this.connection.request(ctx));
      for (const line of batchResultLines(this.connection.providerId, data)) yield this.outcome(line);
    }
  }

  private async batch(batchId: string, ctx: CallContext): Promise<JsonObject> {
    const provider = this.connection.providerId;
    const { body } = await upstreamJson(provider, this.connection.url(`/batches/${encodeURIComponent(batchId)}`), this.connection.request(ctx));
    expectShape(provider, isObject(body) && typeof body.status === 'string', 'batch without a status');
    return body;
  }

  /** One line of an output or error file: `{custom_id, response: {status_code, body}, error}`. */
  private outcome(line: JsonObject & { custom_id: string }): NativeBatchOutcome {
    const provider = this.connection.providerId;
    const customId = line.custom_id;
    const response = line.response;
    if (isObject(response) && typeof response.status_code === 'number') {
      if (response.status_code >= 200 && response.status_code < 300) return { customId, kind: 'served', result: chatCompletionResult(provider, response.body) };
      return { customId, kind: 'failed', error: classifyHttpFailure(provider, response.status_code, new Headers(), JSON.stringify(response.body ?? null)) };
    }
    const error = isObject(line.error) ? line.error : {};
    // Requests the batch never ran (it was cancelled or expired first).
    if (error.code === 'batch_expired' || error.code === 'batch_cancelled') return { customId, kind: 'not_run' };
    const message = typeof error.message === 'string' ? error.message : 'the request failed in the batch';
    return { customId, kind: 'failed', error: new UpstreamError(`${provider} rejected the request: ${message}`, { kind: 'caller_error', provider }) };
  }
}

function firstError(batch: JsonObject): string | null {
  const errors = isObject(batch.errors) && Array.isArray(batch.errors.data) ? batch.errors.data : [];
  const first = errors.find(isObject);
  return first && typeof first.message === 'string' ? first.message : null;
}
