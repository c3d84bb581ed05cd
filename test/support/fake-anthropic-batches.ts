/**
 * Anthropic's Message Batches API on a FakeUpstream (its base URL without `/v1`): `POST /v1/messages/batches`,
 * `GET /v1/messages/batches/{id}`, `POST .../{id}/cancel` and `GET .../{id}/results`, in Anthropic's recorded
 * shapes (the `message_batch` object; results lines `{custom_id, result: {type: succeeded|errored|canceled|expired}}`).
 * A batch stays `in_progress` for `pollsBeforeEnd` reads, then ends; a cancelled one answers its first request only.
 */
import type { FakeUpstream, RecordedRequest } from './fake-upstream';

export type FakeMessageResult = { type: 'succeeded'; message: Record<string, unknown> } | { type: 'errored'; error: { type: 'error'; error: { type: string; message: string } } };

export interface FakeMessageBatch {
  object: Record<string, any>;
  requests: Array<{ custom_id: string; params: Record<string, any> }>;
  reads: number;
  results: string | null;
}

/** A Message as Anthropic answers one. */
export function anthropicMessage(text: string, usage: { input_tokens: number; output_tokens: number }) {
  return {
    id: `msg_${Math.random().toString(36).slice(2, 12)}`, type: 'message', role: 'assistant', model: 'claude-haiku-4-5-20251001',
    content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null,
    usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

export class FakeAnthropicBatches {
  readonly batches = new Map<string, FakeMessageBatch>();
  private seq = 0;

  constructor(fake: FakeUpstream, private readonly opts: { answer: (request: { custom_id: string; params: Record<string, any> }) => FakeMessageResult; pollsBeforeEnd?: number }) {
    fake.on('POST /v1/messages/batches', (req) => this.create(req));
    fake.on('POST /v1/messages/batches/*', (req) => this.cancel(req.path.split('/')[4]));
    fake.on('GET /v1/messages/batches/*', (req) => {
      const [, , , , id, tail] = req.path.split('/');
      return tail === 'results' ? this.results(id) : this.read(id);
    });
  }

  private create(req: RecordedRequest) {
    const id = `msgbatch_fake${(++this.seq).toString().padStart(6, '0')}`;
    const requests = (req.json as { requests: FakeMessageBatch['requests'] }).requests;
    const object = {
      id, type: 'message_batch', processing_status: 'in_progress',
      request_counts: { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: null, created_at: '2026-12-01T00:00:00Z', expires_at: '2026-12-02T00:00:00Z', archived_at: null, cancel_initiated_at: null, results_url: null,
    };
    this.batches.set(id, { object, requests, reads: 0, results: null });
    return { json: object };
  }

  private cancel(id: string) {
    const batch = this.batches.get(id);
    if (!batch) return notFound();
    if (batch.object.processing_status === 'in_progress') Object.assign(batch.object, { processing_status: 'canceling', cancel_initiated_at: '2026-12-01T00:00:05Z' });
    return { json: batch.object };
  }

  private read(id: string) {
    const batch = this.batches.get(id);
    if (!batch) return notFound();
    batch.reads++;
    if (batch.object.processing_status === 'canceling' || (batch.object.processing_status === 'in_progress' && batch.reads > (this.opts.pollsBeforeEnd ?? 1))) this.end(batch);
    return { json: batch.object };
  }

  private end(batch: FakeMessageBatch) {
    const cancelled = batch.object.processing_status === 'canceling';
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    const lines = batch.requests.map((request, i) => {
      if (cancelled && i > 0) {
        counts.canceled++;
        return { custom_id: request.custom_id, result: { type: 'canceled' } };
      }
      const result = this.opts.answer(request);
      counts[result.type]++;
      return { custom_id: request.custom_id, result };
    });
    batch.results = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    Object.assign(batch.object, {
      processing_status: 'ended', request_counts: counts, ended_at: '2026-12-01T00:01:00Z',
      results_url: `https://api.anthropic.com/v1/messages/batches/${batch.object.id}/results`,
    });
  }

  private results(id: string) {
    const batch = this.batches.get(id);
    if (!batch?.results) return notFound();
    return { headers: { 'content-type': 'application/binary' }, body: batch.results };
  }
}

function notFound() {
  return { status: 404, json: { type: 'error', error: { type: 'not_found_error', message: 'Not found' } } };
}
