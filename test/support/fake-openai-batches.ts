/**
 * OpenAI's Batch API on a FakeUpstream (its base URL ending in `/v1`): `POST /v1/files` (multipart, purpose
 * `batch`), `POST /v1/batches`, `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel` and
 * `GET /v1/files/{id}/content`, in OpenAI's recorded shapes (the batch object; output and error file lines
 * `{id, custom_id, response: {status_code, request_id, body}, error}`). A batch stays `in_progress` for
 * `pollsBeforeEnd` reads, then ends as `ending` says; each request's answer is `answer`'s.
 */
import type { FakeUpstream, RecordedRequest } from './fake-upstream';

export interface UploadedFile {
  id: string;
  purpose: string;
  filename: string;
  text: string;
}

export type FakeLineAnswer = { status_code: number; body: unknown } | { error: { code: string; message: string } };

export interface FakeBatch {
  object: Record<string, any>;
  reads: number;
  cancelled: boolean;
}

export interface FakeBatchOptions {
  answer: (line: { custom_id: string; body: Record<string, any> }) => FakeLineAnswer;
  /** Reads of the batch that still find it in progress. */
  pollsBeforeEnd?: number;
  /** How the batch ends: its requests answered (`completed`), or refused whole (`failed`, with this message). */
  ending?: { status: 'completed' } | { status: 'failed'; message: string };
  /** The first creates whose batch is made but whose answer is lost (the connection reset). */
  lostCreateAnswers?: number;
  /** Each create makes its batch at once, and answers once this settles. */
  createAnswered?: Promise<void>;
}

/** A chat completion as OpenAI answers one. */
export function chatCompletion(content: string, usage: { prompt_tokens: number; completion_tokens: number }) {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2, 10)}`, object: 'chat.completion', created: 1_700_000_000, model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    system_fingerprint: 'fp_fake',
  };
}

/** OpenAI's answer to a line: its prompt echoed, 10 prompt tokens per word and 7 completion tokens. */
export const echoAnswer: FakeBatchOptions['answer'] = (line) => {
  const content = line.body.messages[0].content as string;
  return { status_code: 200, body: chatCompletion(`echo: ${content}`, { prompt_tokens: 10 * content.split(' ').length, completion_tokens: 7 }) };
};

export class FakeOpenAIBatches {
  readonly files = new Map<string, UploadedFile>();
  readonly batches = new Map<string, FakeBatch>();
  private seq = 0;

  constructor(private readonly fake: FakeUpstream, private readonly opts: FakeBatchOptions) {
    fake.on('POST /v1/files', (req) => this.upload(req));
    fake.on('POST /v1/batches', async (req, i) => {
      const made = this.create(req);
      await opts.createAnswered;
      return i < (opts.lostCreateAnswers ?? 0) && 'json' in made ? { reset: true } : made;
    });
    fake.on('GET /v1/batches', (req) => this.list(req));
    fake.on('POST /v1/batches/*', (req) => this.cancel(req.path.split('/')[3]));
    fake.on('GET /v1/batches/*', (req) => this.read(req.path.split('/')[3]));
    fake.on('GET /v1/files/*', (req) => {
      const file = this.files.get(req.path.split('/')[3]);
      return file ? { headers: { 'content-type': 'application/octet-stream' }, body: file.text } : notFound();
    });
  }

  /** The JSONL lines the gateway uploaded for a batch. */
  inputLines(batch: FakeBatch): Array<Record<string, any>> {
    return this.files.get(batch.object.input_file_id)!.text.trim().split('\n').map((l) => JSON.parse(l));
  }

  private id(prefix: string): string {
    return `${prefix}_${(++this.seq).toString().padStart(6, '0')}`;
  }

  private upload(req: RecordedRequest) {
    const parts = multipartParts(req);
    const file: UploadedFile = { id: this.id('file'), purpose: parts.purpose?.text ?? '', filename: parts.file?.filename ?? '', text: parts.file?.text ?? '' };
    this.files.set(file.id, file);
    return { json: { id: file.id, object: 'file', bytes: Buffer.byteLength(file.text), created_at: 1_700_000_000, filename: file.filename, purpose: file.purpose, status: 'processed' } };
  }

  private create(req: RecordedRequest) {
    const body = req.json as Record<string, any>;
    if (!this.files.has(body.input_file_id)) return notFound();
    const id = this.id('batch');
    const object = {
      id, object: 'batch', endpoint: body.endpoint, errors: null, input_file_id: body.input_file_id, completion_window: body.completion_window,
      status: 'validating', output_file_id: null, error_file_id: null, created_at: 1_700_000_000, in_progress_at: null, expires_at: 1_700_086_400,
      finalizing_at: null, completed_at: null, failed_at: null, expired_at: null, cancelling_at: null, cancelled_at: null,
      request_counts: { total: 0, completed: 0, failed: 0 }, metadata: body.metadata ?? null,
    };
    this.batches.set(id, { object, reads: 0, cancelled: false });
    return { json: object };
  }

  private list(req: RecordedRequest) {
    const all = [...this.batches.values()].map((b) => b.object).reverse();
    const after = req.query.get('after');
    const from = after ? all.findIndex((b) => b.id === after) + 1 : 0;
    const data = all.slice(from, from + Number(req.query.get('limit') ?? 20));
    return { json: { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: from + data.length < all.length } };
  }

  private cancel(id: string) {
    const batch = this.batches.get(id);
    if (!batch) return notFound();
    batch.cancelled = true;
    if (['validating', 'in_progress'].includes(batch.object.status)) batch.object.status = 'cancelling';
    return { json: batch.object };
  }

  private read(id: string) {
    const batch = this.batches.get(id);
    if (!batch) return notFound();
    batch.reads++;
    if (['validating', 'in_progress', 'cancelling'].includes(batch.object.status)) {
      if (batch.object.status === 'validating') batch.object.status = 'in_progress';
      if (batch.cancelled) this.end(batch, 'cancelled');
      else if (batch.reads > (this.opts.pollsBeforeEnd ?? 1)) this.end(batch, this.opts.ending?.status ?? 'completed');
    }
    return { json: batch.object };
  }

  /** Ends a batch: a cancelled one answers its first request only (the rest were never run). */
  private end(batch: FakeBatch, status: 'completed' | 'cancelled' | 'failed') {
    const lines = this.inputLines(batch);
    Object.assign(batch.object, { status, [`${status}_at`]: 1_700_000_100 });
    if (status === 'failed') {
      const message = this.opts.ending?.status === 'failed' ? this.opts.ending.message : 'failed';
      batch.object.errors = { object: 'list', data: [{ code: 'invalid_request', message, param: null, line: null }] };
      return;
    }
    const output: string[] = [];
    const errors: string[] = [];
    lines.forEach((line, i) => {
      const id = `batch_req_${batch.object.id}_${i}`;
      if (status === 'cancelled' && i > 0) {
        errors.push(JSON.stringify({ id, custom_id: line.custom_id, response: null, error: { code: 'batch_cancelled', message: 'This request was not executed because the batch was cancelled.' } }));
        return;
      }
      const answer = this.opts.answer(line as { custom_id: string; body: Record<string, any> });
      if ('error' in answer) errors.push(JSON.stringify({ id, custom_id: line.custom_id, response: null, error: answer.error }));
      else (answer.status_code === 200 ? output : errors).push(JSON.stringify({ id, custom_id: line.custom_id, response: { status_code: answer.status_code, request_id: `req_${i}`, body: answer.body }, error: null }));
    });
    for (const [kind, text] of [['output', output], ['error', errors]] as const) {
      if (text.length === 0) continue;
      const file: UploadedFile = { id: this.id('file'), purpose: 'batch_output', filename: `${kind}.jsonl`, text: `${text.join('\n')}\n` };
      this.files.set(file.id, file);
      batch.object[`${kind}_file_id`] = file.id;
    }
    batch.object.request_counts = { total: lines.length, completed: output.length, failed: errors.length };
  }
}

function notFound() {
  return { status: 404, json: { error: { message: 'No such object', type: 'invalid_request_error', param: null, code: null } } };
}

/** The parts of a multipart/form-data body by name: their text, and a file part's filename. */
function multipartParts(req: RecordedRequest): Record<string, { text: string; filename?: string }> {
  const boundary = /boundary=("?)([^";]+)\1/.exec(String(req.headers['content-type']))?.[2];
  if (!boundary) return {};
  const parts: Record<string, { text: string; filename?: string }> = {};
  for (const chunk of req.raw.toString('utf8').split(`--${boundary}`)) {
    const split = chunk.indexOf('\r\n\r\n');
    if (split < 0) continue;
    const head = chunk.slice(0, split);
    const name = /name="([^"]+)"/.exec(head)?.[1];
    if (!name) continue;
    parts[name] = { text: chunk.slice(split + 4).replace(/\r\n$/, ''), filename: /filename="([^"]*)"/.exec(head)?.[1] };
  }
  return parts;
}
