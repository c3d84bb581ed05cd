import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { batchCharge, chatCost } from '../../../catalog/pricing';
import { anthropicMessage, FakeAnthropicBatches, type FakeMessageResult } from '../../support/fake-anthropic-batches';
import type { Tenant } from '../../support/gateway';
import { expectBooksClosed as booksClosed, failKeepingUpstreamIdOnce, useNativeBatchGateway } from '../../support/native-batches';

const MODEL = 'claude-haiku-native-batches';

const request = (id: string, content: string) => ({ custom_id: id, params: { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content }] } });

/** Anthropic's answer to a request: its prompt echoed, 10 input tokens per word and 6 output tokens. */
const echo = (req: { params: Record<string, any> }): FakeMessageResult => {
  const content = req.params.messages[0].content as string;
  return { type: 'succeeded', message: anthropicMessage(`echo: ${content}`, { input_tokens: 10 * content.split(' ').length, output_tokens: 6 }) };
};

type ResultLine = { custom_id: string; result: { type: string; message?: Record<string, any>; error?: { type: string; error: { type: string; message: string } } } };

describe("/v1/messages/batches on Anthropic's own Message Batches API", function () {
  this.timeout(180_000);
  const suite = useNativeBatchGateway({ env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-batch-upstream' }), baseModel: 'claude-haiku-4-5', slug: MODEL });
  const { upstream } = suite;

  const clientOf = (tenant: Tenant) => new Anthropic({ apiKey: tenant.key, baseURL: suite.gateway.url, maxRetries: 0, timeout: 60_000 });

  async function waitEnded(client: Anthropic, id: string) {
    const until = Date.now() + 90_000;
    for (;;) {
      const batch = await client.messages.batches.retrieve(id);
      if (batch.processing_status === 'ended') return batch;
      if (Date.now() > until) throw new Error(`message batch ${id} still ${batch.processing_status}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async function resultsOf(client: Anthropic, id: string): Promise<ResultLine[]> {
    const results: ResultLine[] = [];
    for await (const entry of await client.messages.batches.results(id)) results.push(entry as unknown as ResultLine);
    return results;
  }

  const expectBooksClosed = (tenant: Tenant) => booksClosed(suite.gateway.runtime.db, tenant.workspaceId);

  it('serves a batch from the Anthropic SDK on Anthropic\'s batch API, each request settled at the batch price', async () => {
    const fake = new FakeAnthropicBatches(upstream, {
      answer: (req) => (req.custom_id === 'line-2'
        ? { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: text content blocks must be non-empty' } } }
        : echo(req)),
    });
    const tenant = await suite.gateway.newTenant({ credits: 100 });
    const client = clientOf(tenant);
    const requests = [request('first', 'hello there'), request('second', 'one two three'), request('refused', 'x')];
    const created = await client.messages.batches.create({ requests });
    const ended = await waitEnded(client, created.id);
    expect(ended.request_counts).to.deep.equal({ processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });

    // What went upstream: our key, one batch of the requests as the synchronous call sends them.
    const [sent] = upstream.received('POST /v1/messages/batches');
    expect(sent.headers['x-api-key']).to.equal('sk-ant-batch-upstream');
    expect(sent.headers['anthropic-version']).to.equal('2023-06-01');
    expect(sent.json.requests.map((r: { custom_id: string }) => r.custom_id)).to.deep.equal(['line-0', 'line-1', 'line-2']);
    expect(sent.json.requests[1].params).to.deep.equal({ model: suite.record.upstreamId, max_tokens: 64, messages: [{ role: 'user', content: 'one two three' }] });
    expect(fake.batches.size).to.equal(1);
    expect(upstream.received('POST /v1/messages')).to.have.length(0);

    const results = await resultsOf(client, created.id);
    expect(results.map((r) => [r.custom_id, r.result.type])).to.deep.equal([['first', 'succeeded'], ['second', 'succeeded'], ['refused', 'errored']]);
    expect(results[0].result.message).to.deep.include({ type: 'message', model: MODEL, content: [{ type: 'text', text: 'echo: hello there' }] });
    expect(results[2].result.error!.error.type).to.equal('invalid_request_error');
    expect(results[2].result.error!.error.message).to.match(/text content blocks must be non-empty/);

    const usage = await suite.gateway.runtime.db('usage_records').where({ batch_id: created.id }).orderBy('batch_custom_id').select('batch_custom_id', 'status', 'input_tokens', 'output_tokens', 'credits_micro');
    expect(usage.map((u) => [u.batch_custom_id, u.status])).to.deep.equal([['first', 'succeeded'], ['refused', 'failed'], ['second', 'succeeded']]);
    const expected = (words: number) => batchCharge(suite.record, chatCost(suite.record, { inputTokens: 10 * words, outputTokens: 6 }));
    expect(usage.map((u) => Number(u.credits_micro))).to.deep.equal([expected(2), 0, expected(3)]);
    expect(Math.round(results[0].result.message!.credits_used * 1e6)).to.equal(expected(2));
    expect(await expectBooksClosed(tenant)).to.equal(expected(2) + expected(3));
  });

  it('forwards a cancel to Anthropic: what it answered is charged, the rest end canceled, holds given back', async () => {
    const fake = new FakeAnthropicBatches(upstream, { answer: echo, pollsBeforeEnd: 100_000 });
    const tenant = await suite.gateway.newTenant({ credits: 100 });
    const client = clientOf(tenant);
    const created = await client.messages.batches.create({ requests: [request('a', 'alpha'), request('b', 'beta')] });
    const until = Date.now() + 30_000;
    while (fake.batches.size === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(fake.batches.size).to.equal(1);
    await client.messages.batches.cancel(created.id);
    const ended = await waitEnded(client, created.id);
    expect(ended.request_counts).to.deep.equal({ processing: 0, succeeded: 1, errored: 0, canceled: 1, expired: 0 });
    const [upstreamBatch] = [...fake.batches.keys()];
    expect(upstream.received(`POST /v1/messages/batches/${upstreamBatch}/cancel`)).to.have.length(1);
    expect((await resultsOf(client, created.id)).map((r) => [r.custom_id, r.result.type])).to.deep.equal([['a', 'succeeded'], ['b', 'canceled']]);
    expect(await expectBooksClosed(tenant)).to.equal(batchCharge(suite.record, chatCost(suite.record, { inputTokens: 10, outputTokens: 6 })));
  });

  it('makes one message batch when keeping its id fails once: the retried submission takes the id it had', async () => {
    const fake = new FakeAnthropicBatches(upstream, { answer: echo });
    const restore = await failKeepingUpstreamIdOnce(suite.gateway.runtime.db);
    try {
      const tenant = await suite.gateway.newTenant({ credits: 100 });
      const client = clientOf(tenant);
      const created = await client.messages.batches.create({ requests: [request('a', 'alpha beta'), request('b', 'gamma')] });
      const ended = await waitEnded(client, created.id);
      expect(ended.request_counts).to.deep.equal({ processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 0 });
      expect(fake.batches.size).to.equal(1);
      expect(upstream.received('POST /v1/messages/batches')).to.have.length(1);
      const expected = (words: number) => batchCharge(suite.record, chatCost(suite.record, { inputTokens: 10 * words, outputTokens: 6 }));
      expect(await expectBooksClosed(tenant)).to.equal(expected(2) + expected(1));
    } finally {
      await restore();
    }
  });
});
