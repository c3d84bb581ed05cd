import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';

type Line = { custom_id: string; method?: string; url?: string; body: Record<string, unknown> };

function jsonl(lines: Array<Line | string>, url = '/v1/chat/completions'): Buffer {
  return Buffer.from(lines.map((l) => (typeof l === 'string' ? l : JSON.stringify({ method: 'POST', url, ...l }))).join('\n') + '\n');
}

const chatLine = (id: string, content = `say ${id}`, model = 'sim-chat'): Line => ({ custom_id: id, body: { model, messages: [{ role: 'user', content }], max_tokens: 32 } });

async function uploadBatchFile(tenant: Tenant, data: Buffer): Promise<string> {
  const file = await tenant.client.files.create({ file: await toFile(data, 'batch.jsonl'), purpose: 'batch' });
  return file.id;
}

async function waitForBatch(tenant: Tenant, id: string, done: (b: Batch) => boolean = (b) => ['completed', 'failed', 'cancelled', 'expired'].includes(b.status), timeoutMs = 90_000): Promise<Batch> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const batch = await tenant.client.batches.retrieve(id);
    if (done(batch)) return batch;
    if (Date.now() > until) throw new Error(`batch ${id} still ${batch.status}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function fileLines(tenant: Tenant, fileId: string): Promise<Array<Record<string, any>>> {
  const text = await (await tenant.client.files.content(fileId)).text();
  return text.trim().split('\n').map((l) => JSON.parse(l));
}

async function workspaceBooks(tenant: Tenant, gateway: TestGateway) {
  const db = gateway.runtime.db;
  const held = await db('reservations').where({ workspace_id: tenant.workspaceId, status: 'held' }).count<{ count: string }[]>('* as count');
  const usage = await db('usage_records').where({ workspace_id: tenant.workspaceId }).sum<{ sum: string }[]>('credits_micro as sum');
  // The ledger's rows of reservations add up to minus what they charged.
  const ledger = await db('credit_ledger').where({ workspace_id: tenant.workspaceId }).whereNotNull('reservation_id').sum<{ sum: string }[]>('amount_micro as sum');
  return { held: Number(held[0].count), usageMicro: Number(usage[0].sum ?? 0), ledgerSpentMicro: -Number(ledger[0].sum ?? 0) || 0 };
}

describe('/v1/batches', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: { BATCH_CONCURRENCY: '4', BATCH_LINES_PER_RUN: '5' } });
  });
  after(() => gateway?.stop());

  it('runs a batch through the official client: create, retrieve, list, output file, exact books', async () => {
    const tenant = await gateway.newTenant();
    const lines = Array.from({ length: 12 }, (_, i) => chatLine(`line-${i}`));
    const inputFileId = await uploadBatchFile(tenant, jsonl(lines));
    const created = await tenant.client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    expect(created.id).to.match(/^batch_/);
    expect(created).to.include({ object: 'batch', endpoint: '/v1/chat/completions', input_file_id: inputFileId, completion_window: '24h', status: 'validating' });
    expect(created.metadata).to.deep.equal({ job: 'nightly' });
    expect(created.expires_at! - created.created_at).to.equal(24 * 3600);

    const done = await waitForBatch(tenant, created.id);
    expect(done.status).to.equal('completed');
    expect(done.request_counts).to.deep.equal({ total: 12, completed: 12, failed: 0 });
    expect(done.in_progress_at).to.be.a('number');
    expect(done.finalizing_at).to.be.a('number');
    expect(done.completed_at).to.be.a('number');
    expect(done.error_file_id).to.equal(null);
    expect(done.usage!.input_tokens).to.be.greaterThan(0);
    expect(done.usage!.total_tokens).to.equal(done.usage!.input_tokens + done.usage!.output_tokens);

    const output = await fileLines(tenant, done.output_file_id!);
    expect(output.map((l) => l.custom_id)).to.deep.equal(lines.map((l) => l.custom_id));
    for (const line of output) {
      expect(line.id).to.match(/^batch_req_/);
      expect(line.error).to.equal(null);
      expect(line.response.status_code).to.equal(200);
      expect(line.response.request_id).to.be.a('string');
      expect(line.response.body.object).to.equal('chat.completion');
      expect(line.response.body.choices[0].message.content).to.be.a('string');
    }
    const outputFile = await tenant.client.files.retrieve(done.output_file_id!);
    expect(outputFile.purpose).to.equal('batch_output');

    // Every line has its usage record, naming the batch and the line.
    const usage = await gateway.runtime.db('usage_records').where({ workspace_id: tenant.workspaceId, batch_id: created.id }).select('batch_custom_id', 'request_id', 'credits_micro');
    expect(usage.map((u) => u.batch_custom_id).sort()).to.deep.equal(lines.map((l) => l.custom_id).sort());
    expect(usage.map((u) => u.request_id).sort()).to.deep.equal(output.map((l) => l.response.request_id).sort());

    // Books: no hold left; the lines' charges are the workspace's spend, exactly.
    const books = await workspaceBooks(tenant, gateway);
    expect(books.held).to.equal(0);
    const lineCharges = usage.reduce((sum, u) => sum + Number(u.credits_micro), 0);
    expect(books.usageMicro).to.equal(lineCharges);
    expect(books.ledgerSpentMicro).to.equal(lineCharges);
    expect(Math.round((done as Batch & { credits_used: number }).credits_used * 1e6)).to.equal(lineCharges);

    const page = await tenant.client.batches.list({ limit: 10 });
    expect(page.data.map((b) => b.id)).to.include(created.id);
  });

  it('takes an Idempotency-Key: the same key and body answer the same batch, another body is refused', async () => {
    const tenant = await gateway.newTenant();
    const inputFileId = await uploadBatchFile(tenant, jsonl([chatLine('once')]));
    const body = { input_file_id: inputFileId, endpoint: '/v1/chat/completions' as const, completion_window: '24h' as const };
    const headers = { 'Idempotency-Key': `batch-key-${tenant.workspaceId}` };
    const first = await tenant.client.batches.create(body, { headers });
    const again = await tenant.client.batches.create(body, { headers });
    expect(again.id).to.equal(first.id);
    let caught: unknown;
    try {
      await tenant.client.batches.create({ ...body, metadata: { other: 'body' } }, { headers });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(OpenAI.UnprocessableEntityError);
    expect((caught as InstanceType<typeof OpenAI.APIError>).code).to.equal('idempotency_key_reused');
    const done = await waitForBatch(tenant, first.id);
    expect(done.request_counts).to.deep.equal({ total: 1, completed: 1, failed: 0 });
    expect(await gateway.runtime.db('batches').where({ workspace_id: tenant.workspaceId }).pluck('id')).to.deep.equal([first.id]);

    // Two requests with a new key at once make one batch: each answers it, or is told the key is in use.
    const racing = { 'content-type': 'application/json', 'idempotency-key': `race-${tenant.workspaceId}` };
    const answers = await Promise.all([1, 2].map(() => tenant.fetch('/v1/batches', { method: 'POST', headers: racing, body: JSON.stringify(body) })));
    const made = await gateway.runtime.db('batches').where({ workspace_id: tenant.workspaceId }).whereNot({ id: first.id }).pluck('id');
    expect(made).to.have.length(1);
    for (const answer of answers) {
      const json = await answer.json() as { id?: string; error?: { code: string } };
      if (answer.status === 200) expect(json.id).to.equal(made[0]);
      else expect([answer.status, json.error?.code]).to.deep.equal([409, 'idempotency_key_in_use']);
    }
    await waitForBatch(tenant, made[0]);
  });

  it('pages the list with after and limit (newest first)', async () => {
    const tenant = await gateway.newTenant();
    const inputFileId = await uploadBatchFile(tenant, jsonl([chatLine('a')]));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await tenant.client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    const first = await tenant.fetch('/v1/batches?limit=2').then((r) => r.json()) as { data: Batch[]; has_more: boolean; first_id: string; last_id: string };
    expect(first.data.map((b) => b.id)).to.deep.equal([ids[2], ids[1]]);
    expect(first).to.include({ has_more: true, first_id: ids[2], last_id: ids[1] });
    const second = await tenant.fetch(`/v1/batches?limit=2&after=${first.last_id}`).then((r) => r.json()) as { data: Batch[]; has_more: boolean };
    expect(second.data.map((b) => b.id)).to.deep.equal([ids[0]]);
    expect(second.has_more).to.equal(false);
    const all: string[] = [];
    for await (const b of tenant.client.batches.list({ limit: 1 })) all.push(b.id);
    expect(all).to.deep.equal([...ids].reverse());
    for (const id of ids) await waitForBatch(tenant, id);
  });

  it('fails a bad input file in validating with line-numbered errors, holding and charging nothing', async () => {
    const tenant = await gateway.newTenant();
    const data = jsonl([
      chatLine('ok-1'),
      'this is not json',
      chatLine('ok-1'),
      { custom_id: 'wrong-url', url: '/v1/embeddings', body: { model: 'sim-embed', input: 'x' } },
      { custom_id: 'wrong-method', method: 'GET', body: { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] } },
      chatLine('no-such-model', 'x', 'no-such-model'),
      { custom_id: 'bad-body', body: { model: 'sim-chat', messages: 'not a list' } },
      { custom_id: 'embed-model', body: { model: 'sim-embed', messages: [{ role: 'user', content: 'x' }] } },
    ]);
    const inputFileId = await uploadBatchFile(tenant, data);
    const created = await tenant.client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const failed = await waitForBatch(tenant, created.id);
    expect(failed.status).to.equal('failed');
    expect(failed.failed_at).to.be.a('number');
    expect(failed.output_file_id).to.equal(null);
    const errors = (failed.errors?.data ?? []).map((e) => ({ line: e.line, code: e.code, param: e.param }));
    expect(errors).to.deep.equal([
      { line: 2, code: 'invalid_json_line', param: null },
      { line: 3, code: 'duplicate_custom_id', param: 'custom_id' },
      { line: 4, code: 'invalid_url', param: 'url' },
      { line: 5, code: 'invalid_method', param: 'method' },
      { line: 6, code: 'model_not_found', param: 'body.model' },
      { line: 7, code: 'invalid_type', param: 'body.messages' },
      { line: 8, code: 'model_modality_mismatch', param: 'body.model' },
    ]);
    for (const e of failed.errors?.data ?? []) expect(e.message).to.be.a('string').and.not.equal('');
    const books = await workspaceBooks(tenant, gateway);
    expect(books).to.deep.equal({ held: 0, usageMicro: 0, ledgerSpentMicro: 0 });
    expect(await gateway.runtime.db('reservations').where({ workspace_id: tenant.workspaceId }).count<{ count: string }[]>('* as count').then((r) => Number(r[0].count))).to.equal(0);
  });

  it('refuses a bad create in OpenAI\'s error shape', async () => {
    const tenant = await gateway.newTenant();
    const notes = await tenant.client.files.create({ file: await toFile(Buffer.from('{}\n'), 'notes.jsonl'), purpose: 'assistants' });
    const errorOf = async (r: Response) => ((await r.json()) as { error: Record<string, unknown> }).error;
    const post = (body: unknown) => tenant.fetch('/v1/batches', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const wrongPurpose = await post({ input_file_id: notes.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(wrongPurpose.status).to.equal(400);
    expect(await errorOf(wrongPurpose)).to.include({ code: 'invalid_file_purpose', param: 'input_file_id' });
    const missing = await post({ input_file_id: 'file_nope', endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(missing.status).to.equal(404);
    expect(await errorOf(missing)).to.include({ code: 'file_not_found', param: 'input_file_id' });
    const badEndpoint = await post({ input_file_id: notes.id, endpoint: '/v1/images/generations', completion_window: '24h' });
    expect(badEndpoint.status).to.equal(400);
    expect((await errorOf(badEndpoint)).param).to.equal('endpoint');
    const badWindow = await post({ input_file_id: notes.id, endpoint: '/v1/chat/completions', completion_window: '1h' });
    expect(badWindow.status).to.equal(400);
    const unknown = await tenant.fetch('/v1/batches/batch_nope');
    expect(unknown.status).to.equal(404);
    expect((await errorOf(unknown)).code).to.equal('batch_not_found');
  });

  it("keeps a line's upstream error that line's own: the batch completes, the error file holds it", async () => {
    const tenant = await gateway.newTenant();
    const lines = [chatLine('good-1'), chatLine('throttled', 'x', 'sim-chat-fail-429'), chatLine('good-2')];
    const created = await tenant.client.batches.create({ input_file_id: await uploadBatchFile(tenant, jsonl(lines)), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await waitForBatch(tenant, created.id);
    expect(done.status).to.equal('completed');
    expect(done.request_counts).to.deep.equal({ total: 3, completed: 2, failed: 1 });
    const output = await fileLines(tenant, done.output_file_id!);
    expect(output.map((l) => l.custom_id)).to.deep.equal(['good-1', 'good-2']);
    const errors = await fileLines(tenant, done.error_file_id!);
    expect(errors).to.have.length(1);
    expect(errors[0].custom_id).to.equal('throttled');
    expect(errors[0].error).to.equal(null);
    expect(errors[0].response.status_code).to.equal(429);
    expect(errors[0].response.body.error.message).to.be.a('string');
    const books = await workspaceBooks(tenant, gateway);
    expect(books.held).to.equal(0);
    expect(books.ledgerSpentMicro).to.equal(books.usageMicro);
  });

  it('runs embeddings batches at the model\'s batch discount', async () => {
    const tenant = await gateway.newTenant();
    const lines = [{ custom_id: 'e1', body: { model: 'sim-embed', input: 'the quick brown fox' } }, { custom_id: 'e2', body: { model: 'sim-embed', input: ['a', 'b'] } }];
    const created = await tenant.client.batches.create({ input_file_id: await uploadBatchFile(tenant, jsonl(lines, '/v1/embeddings')), endpoint: '/v1/embeddings', completion_window: '24h' });
    const done = await waitForBatch(tenant, created.id);
    expect(done.status).to.equal('completed');
    const output = await fileLines(tenant, done.output_file_id!);
    expect(output.map((l) => l.response.body.object)).to.deep.equal(['list', 'list']);
    // Priced at the list price, less the catalog's batch discount, rounded up once.
    const record = (await gateway.runtime.catalog.get('sim-embed'))!;
    const usage = await gateway.runtime.db('usage_records').where({ batch_id: created.id }).select('input_tokens', 'credits_micro');
    const { embeddingCost, batchCharge } = await import('../../../catalog/pricing');
    for (const u of usage) expect(Number(u.credits_micro)).to.equal(batchCharge(record, embeddingCost(record, { inputTokens: Number(u.input_tokens) })));
  });

  describe('past its completion window', () => {
    let shortWindow: TestGateway;
    before(async function () {
      this.timeout(180_000);
      // One line at a time, and a window of 10 s instead of 24 h.
      shortWindow = await startTestGateway({ env: { BATCH_CONCURRENCY: '1', BATCH_WINDOW_SECONDS: '10' } });
    });
    after(() => shortWindow?.stop());

    it('ends expired: the lines that finished are in the output, the rest end batch_expired, nothing stays held', async () => {
      const tenant = await shortWindow.newTenant();
      // A quick line, then slow ones (1.5 s each) that cannot all run within the window.
      const lines = [chatLine('first'), ...Array.from({ length: 16 }, (_, i) => chatLine(`slow-${i}`, 'x', 'sim-chat-slow'))];
      const created = await tenant.client.batches.create({ input_file_id: await uploadBatchFile(tenant, jsonl(lines)), endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect(created.expires_at! - created.created_at).to.equal(10);
      const done = await waitForBatch(tenant, created.id);
      expect(done.status).to.equal('expired');
      expect(done.expired_at).to.be.a('number');
      const output = await fileLines(tenant, done.output_file_id!);
      const finished = output.map((l) => l.custom_id);
      expect(finished[0]).to.equal('first');
      for (const l of output) expect(l.response.status_code).to.equal(200);
      const errors = await fileLines(tenant, done.error_file_id!);
      expect(errors.length).to.be.greaterThan(0);
      for (const l of errors) expect(l.error.code).to.equal('batch_expired');
      expect([...finished, ...errors.map((l) => l.custom_id)].sort()).to.deep.equal(lines.map((l) => l.custom_id).sort());
      expect(done.request_counts!.completed).to.equal(output.length);
      // Only the lines that ran were charged, once each.
      const usage = await shortWindow.runtime.db('usage_records').where({ batch_id: created.id }).select('batch_custom_id');
      expect(usage.map((u) => u.batch_custom_id).sort()).to.deep.equal([...finished].sort());
      const books = await workspaceBooks(tenant, shortWindow);
      expect(books.held).to.equal(0);
      expect(books.ledgerSpentMicro).to.equal(books.usageMicro);
    });
  });
});
