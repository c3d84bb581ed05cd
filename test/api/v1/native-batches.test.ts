import { expect } from 'chai';
import { toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import { batchCharge, chatCost } from '../../../catalog/pricing';
import { chatCompletion, echoAnswer as echo, FakeOpenAIBatches } from '../../support/fake-openai-batches';
import type { Tenant } from '../../support/gateway';
import { echoedCharges, expectBooksClosed as booksClosed, failKeepingUpstreamIdOnce, useNativeBatchGateway } from '../../support/native-batches';

const MODEL = 'gpt-4o-mini-native-batches';

const chatLine = (id: string, content: string) => ({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content }], max_tokens: 50 } });

describe('/v1/batches on the provider\'s own batch API', function () {
  this.timeout(180_000);
  const suite = useNativeBatchGateway({ env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-batch-upstream' }), baseModel: 'gpt-4o-mini', slug: MODEL });
  const { upstream } = suite;

  async function submit(tenant: Tenant, lines: Array<ReturnType<typeof chatLine>>): Promise<Batch> {
    const file = await tenant.client.files.create({ file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n')), 'native.jsonl'), purpose: 'batch' });
    return tenant.client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  }

  async function waitFor(tenant: Tenant, id: string, done = (b: Batch) => ['completed', 'failed', 'cancelled', 'expired'].includes(b.status)): Promise<Batch> {
    const until = Date.now() + 90_000;
    for (;;) {
      const batch = await tenant.client.batches.retrieve(id);
      if (done(batch)) return batch;
      if (Date.now() > until) throw new Error(`batch ${id} still ${batch.status}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async function fileLines(tenant: Tenant, fileId: string | null | undefined): Promise<Array<Record<string, any>>> {
    if (!fileId) return [];
    const text = await (await tenant.client.files.content(fileId)).text();
    return text.trim().split('\n').map((l) => JSON.parse(l));
  }

  /** The books closed, and the batch says it used what was spent. */
  async function expectBooksClosed(tenant: Tenant, batch: Batch): Promise<number> {
    const spent = await booksClosed(suite.gateway.runtime.db, tenant.workspaceId);
    expect(Math.round((batch as Batch & { credits_used: number }).credits_used * 1e6)).to.equal(spent);
    return spent;
  }

  it('serves a batch through OpenAI\'s Batch API: uploads the lines, polls, and charges each at the batch price', async () => {
    const fakeBatches = new FakeOpenAIBatches(upstream, { answer: echo });
    const tenant = await suite.gateway.newTenant({ credits: 100 });
    const lines = [chatLine('first', 'hello there'), chatLine('second', 'one two three'), chatLine('third', 'bye')];
    const created = await submit(tenant, lines);
    const done = await waitFor(tenant, created.id);
    expect(done.status).to.equal('completed');
    expect(done.request_counts).to.deep.equal({ total: 3, completed: 3, failed: 0 });
    expect(done.error_file_id).to.equal(null);

    // What went upstream: the platform's key, one JSONL file of the lines as the synchronous call sends them, one batch.
    const [upload] = upstream.received('POST /v1/files');
    expect(upload.headers.authorization).to.equal('Bearer sk-batch-upstream');
    const [batch] = [...fakeBatches.batches.values()];
    expect(fakeBatches.files.get(batch.object.input_file_id)!.purpose).to.equal('batch');
    const sent = fakeBatches.inputLines(batch);
    expect(sent.map((l) => [l.custom_id, l.method, l.url])).to.deep.equal([['line-0', 'POST', '/v1/chat/completions'], ['line-1', 'POST', '/v1/chat/completions'], ['line-2', 'POST', '/v1/chat/completions']]);
    expect(sent[1].body).to.deep.include({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three' }] });
    expect(sent[1].body.max_tokens ?? sent[1].body.max_completion_tokens).to.equal(50);
    const [create] = upstream.received('POST /v1/batches');
    expect(create.headers.authorization).to.equal('Bearer sk-batch-upstream');
    expect(create.json).to.deep.include({ input_file_id: batch.object.input_file_id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(upstream.received('POST /v1/chat/completions')).to.have.length(0);

    // Our output file: the same objects as a line the gateway serves, named by the client's custom ids.
    const output = await fileLines(tenant, done.output_file_id);
    expect(output.map((l) => l.custom_id)).to.deep.equal(['first', 'second', 'third']);
    const usage = await suite.gateway.runtime.db('usage_records').where({ batch_id: created.id }).select('request_id', 'batch_custom_id', 'input_tokens', 'output_tokens', 'credits_micro', 'model_used', 'status');
    for (const [i, line] of output.entries()) {
      expect(line.id).to.match(/^batch_req_/);
      expect(line.error).to.equal(null);
      expect(line.response.status_code).to.equal(200);
      expect(line.response.body).to.deep.include({ object: 'chat.completion', model: MODEL });
      expect(line.response.body.choices[0].message.content).to.equal(`echo: ${lines[i].body.messages[0].content}`);
      const recorded = usage.find((u) => u.request_id === line.response.request_id)!;
      expect(recorded).to.include({ batch_custom_id: line.custom_id, model_used: MODEL, status: 'succeeded' });
      const words = lines[i].body.messages[0].content.split(' ').length;
      expect([Number(recorded.input_tokens), Number(recorded.output_tokens)]).to.deep.equal([10 * words, 7]);
      // The batch price: the list price of what it used, less the model's batch discount.
      const charge = batchCharge(suite.record, chatCost(suite.record, { inputTokens: 10 * words, outputTokens: 7 }));
      expect(Number(recorded.credits_micro)).to.equal(charge);
      expect(Math.round(line.response.body.credits_used * 1e6)).to.equal(charge);
    }
    const spent = await expectBooksClosed(tenant, done);
    expect(spent).to.equal(usage.reduce((sum, u) => sum + Number(u.credits_micro), 0));
  });

  it('forwards a cancel upstream: lines it answered are charged, the rest end batch_cancelled, every hold goes back', async () => {
    const fakeBatches = new FakeOpenAIBatches(upstream, { answer: echo, pollsBeforeEnd: 100_000 });
    const tenant = await suite.gateway.newTenant({ credits: 100 });
    const created = await submit(tenant, [chatLine('a', 'alpha'), chatLine('b', 'beta'), chatLine('c', 'gamma')]);
    const until = Date.now() + 30_000;
    while (fakeBatches.batches.size === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(fakeBatches.batches.size).to.equal(1);
    const cancelling = await tenant.client.batches.cancel(created.id);
    expect(['cancelling', 'cancelled']).to.include(cancelling.status);
    const done = await waitFor(tenant, created.id);
    expect(done.status).to.equal('cancelled');
    const [batch] = [...fakeBatches.batches.values()];
    expect(upstream.received(`POST /v1/batches/${batch.object.id}/cancel`)).to.have.length(1);
    expect(done.request_counts).to.deep.equal({ total: 3, completed: 1, failed: 0 });
    expect((await fileLines(tenant, done.output_file_id)).map((l) => l.custom_id)).to.deep.equal(['a']);
    const errors = await fileLines(tenant, done.error_file_id);
    expect(errors.map((l) => [l.custom_id, l.error.code])).to.deep.equal([['b', 'batch_cancelled'], ['c', 'batch_cancelled']]);
    const spent = await expectBooksClosed(tenant, done);
    expect(spent).to.equal(batchCharge(suite.record, chatCost(suite.record, { inputTokens: 10, outputTokens: 7 })));
  });

  it("keeps a request's upstream error that line's own, and a batch the provider failed is every line's error, holds given back", async () => {
    new FakeOpenAIBatches(upstream, {
      answer: (line) => (line.custom_id === 'line-1'
        ? { status_code: 400, body: { error: { message: 'Invalid value for max_tokens.', type: 'invalid_request_error', param: 'max_tokens', code: null } } }
        : echo(line)),
    });
    const tenant = await suite.gateway.newTenant({ credits: 100 });
    const mixed = await waitFor(tenant, (await submit(tenant, [chatLine('ok', 'fine'), chatLine('refused', 'nope')])).id);
    expect(mixed.status).to.equal('completed');
    expect(mixed.request_counts).to.deep.equal({ total: 2, completed: 1, failed: 1 });
    const [refused] = await fileLines(tenant, mixed.error_file_id);
    expect(refused.custom_id).to.equal('refused');
    expect(refused.response.status_code).to.equal(400);
    expect(refused.response.body.error.message).to.match(/Invalid value for max_tokens/);
    await expectBooksClosed(tenant, mixed);

    upstream.reset();
    new FakeOpenAIBatches(upstream, { answer: echo, ending: { status: 'failed', message: 'The model gpt-4o-mini does not support batches here.' } });
    const other = await suite.gateway.newTenant({ credits: 100 });
    const failed = await waitFor(other, (await submit(other, [chatLine('x', 'one'), chatLine('y', 'two')])).id);
    expect(failed.status).to.equal('completed');
    expect(failed.request_counts).to.deep.equal({ total: 2, completed: 0, failed: 2 });
    const lines = await fileLines(other, failed.error_file_id);
    expect(lines.map((l) => l.custom_id)).to.deep.equal(['x', 'y']);
    for (const line of lines) expect(line.response.body.error.message).to.match(/does not support batches here/);
    expect(await expectBooksClosed(other, failed)).to.equal(0);
    const usage = await suite.gateway.runtime.db('usage_records').where({ batch_id: failed.id }).select('status', 'credits_micro');
    expect(usage.map((u) => [u.status, Number(u.credits_micro)])).to.deep.equal([['failed', 0], ['failed', 0]]);

    // The provider refuses the upload itself: the same, at once.
    upstream.reset();
    upstream.on('POST /v1/files', { status: 400, json: { error: { message: 'File is not valid JSONL.', type: 'invalid_request_error', param: null, code: null } } });
    const third = await suite.gateway.newTenant({ credits: 100 });
    const refusedWhole = await waitFor(third, (await submit(third, [chatLine('z', 'three')])).id);
    expect(refusedWhole.request_counts).to.deep.equal({ total: 1, completed: 0, failed: 1 });
    expect((await fileLines(third, refusedWhole.error_file_id))[0].response.body.error.message).to.match(/File is not valid JSONL/);
    expect(await expectBooksClosed(third, refusedWhole)).to.equal(0);

    // The provider no longer knows the batch it made: every line ends with its answer, nothing is held.
    upstream.reset();
    new FakeOpenAIBatches(upstream, { answer: echo });
    upstream.on('GET /v1/batches/*', { status: 404, json: { error: { message: 'No batch found with that id.', type: 'invalid_request_error', param: null, code: null } } });
    const fourth = await suite.gateway.newTenant({ credits: 100 });
    const lost = await waitFor(fourth, (await submit(fourth, [chatLine('w', 'four'), chatLine('v', 'five')])).id);
    expect(lost.request_counts).to.deep.equal({ total: 2, completed: 0, failed: 2 });
    for (const line of await fileLines(fourth, lost.error_file_id)) expect(line.response.body.error.message).to.match(/No batch found/);
    expect(await expectBooksClosed(fourth, lost)).to.equal(0);
  });

  const echoCharges = (contents: string[]) => echoedCharges(suite.record, contents);

  it('makes one upstream batch when the answer to its creation is lost: the retried submission finds it by its tag', async () => {
    const fakeBatches = new FakeOpenAIBatches(upstream, { answer: echo, lostCreateAnswers: 1 });
    const tenant = await suite.gateway.newTenant({ credits: 100 });
    const created = await submit(tenant, [chatLine('a', 'alpha beta'), chatLine('b', 'gamma')]);
    const done = await waitFor(tenant, created.id);
    expect(done.status).to.equal('completed');
    expect(done.request_counts).to.deep.equal({ total: 2, completed: 2, failed: 0 });
    // One batch upstream, tagged with ours (its metadata and its file's name); the retry listed and did not make another.
    expect(fakeBatches.batches.size).to.equal(1);
    const [batch] = [...fakeBatches.batches.values()];
    expect(batch.object.metadata).to.deep.equal({ gateway_batch_id: created.id });
    expect(fakeBatches.files.get(batch.object.input_file_id)!.filename).to.equal(`${created.id}.jsonl`);
    expect(upstream.received('POST /v1/batches')).to.have.length(1);
    expect(upstream.received('GET /v1/batches')).to.have.length(1);
    expect(await expectBooksClosed(tenant, done)).to.equal(echoCharges(['alpha beta', 'gamma']));
  });

  it('makes one upstream batch when keeping its id fails once: the retried submission takes the id it had', async () => {
    const fakeBatches = new FakeOpenAIBatches(upstream, { answer: echo });
    const restore = await failKeepingUpstreamIdOnce(suite.gateway.runtime.db);
    try {
      const tenant = await suite.gateway.newTenant({ credits: 100 });
      const done = await waitFor(tenant, (await submit(tenant, [chatLine('a', 'one two'), chatLine('b', 'three')])).id);
      expect(done.request_counts).to.deep.equal({ total: 2, completed: 2, failed: 0 });
      expect(fakeBatches.batches.size).to.equal(1);
      expect(upstream.received('POST /v1/files')).to.have.length(1);
      expect(await expectBooksClosed(tenant, done)).to.equal(echoCharges(['one two', 'three']));
    } finally {
      await restore();
    }
  });

  it('serves a batch of a model without the switch on the gateway itself', async () => {
    upstream.on('POST /v1/chat/completions', { json: chatCompletion('served inline', { prompt_tokens: 5, completion_tokens: 3 }) });
    const tenant = await suite.gateway.newTenant({ credits: 100 });
    const line = { ...chatLine('inline', 'hi'), body: { ...chatLine('inline', 'hi').body, model: 'gpt-4o-mini' } };
    const done = await waitFor(tenant, (await submit(tenant, [line])).id);
    expect(done.request_counts).to.deep.equal({ total: 1, completed: 1, failed: 0 });
    expect(upstream.received('POST /v1/batches')).to.have.length(0);
    expect(upstream.received('POST /v1/chat/completions')).to.have.length(1);
  });

  describe('past its completion window', () => {
    // A window of 8 s instead of 24 h.
    const windowed = useNativeBatchGateway({
      env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-batch-upstream', BATCH_WINDOW_SECONDS: '8' }), baseModel: 'gpt-4o-mini', slug: 'gpt-4o-mini-native-window',
    });

    it('forwards a cancel upstream when the window ends: the batch ends expired with what finished, the rest batch_expired, holds given back', async () => {
      const fakeBatches = new FakeOpenAIBatches(windowed.upstream, { answer: echo, pollsBeforeEnd: 100_000 });
      const tenant = await windowed.gateway.newTenant({ credits: 100 });
      const line = (id: string, content: string) => ({ ...chatLine(id, content), body: { ...chatLine(id, content).body, model: windowed.record.slug } });
      const file = await tenant.client.files.create({ file: await toFile(Buffer.from([line('a', 'alpha beta'), line('b', 'gamma'), line('c', 'delta')].map((l) => JSON.stringify(l)).join('\n')), 'window.jsonl'), purpose: 'batch' });
      const created = await tenant.client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect(created.expires_at! - created.created_at).to.equal(8);
      const done = await waitFor(tenant, created.id);
      expect(done.status).to.equal('expired');
      expect(done.expired_at).to.be.a('number');
      // The window's end went upstream as a cancel; the provider answered the first request before it stopped.
      const [batch] = [...fakeBatches.batches.values()];
      expect(fakeBatches.batches.size).to.equal(1);
      expect(windowed.upstream.received(`POST /v1/batches/${batch.object.id}/cancel`)).to.have.length(1);
      expect(done.request_counts).to.deep.equal({ total: 3, completed: 1, failed: 0 });
      const output = await fileLines(tenant, done.output_file_id);
      expect(output.map((l) => [l.custom_id, l.response.status_code])).to.deep.equal([['a', 200]]);
      const errors = await fileLines(tenant, done.error_file_id);
      expect(errors.map((l) => [l.custom_id, l.error.code])).to.deep.equal([['b', 'batch_expired'], ['c', 'batch_expired']]);
      const usage = await windowed.gateway.runtime.db('usage_records').where({ batch_id: created.id }).select('batch_custom_id');
      expect(usage.map((u) => u.batch_custom_id)).to.deep.equal(['a']);
      const spent = await booksClosed(windowed.gateway.runtime.db, tenant.workspaceId);
      expect(Math.round((done as Batch & { credits_used: number }).credits_used * 1e6)).to.equal(spent);
      expect(spent).to.equal(echoedCharges(windowed.record, ['alpha beta']));
    });
  });
});
