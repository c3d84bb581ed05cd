import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';

function anthropicFor(gateway: TestGateway, tenant: Tenant): Anthropic {
  return new Anthropic({ apiKey: tenant.key, baseURL: gateway.url, maxRetries: 0, timeout: 60_000 });
}

const request = (id: string, model = 'sim-chat') => ({ custom_id: id, params: { model, max_tokens: 32, messages: [{ role: 'user' as const, content: `say ${id}` }] } });

/** What a call that must fail threw. */
async function rejection(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

async function waitEnded(client: Anthropic, id: string, timeoutMs = 90_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.messages.batches.retrieve(id);
    if (batch.processing_status === 'ended') return batch;
    if (Date.now() > until) throw new Error(`message batch ${id} still ${batch.processing_status}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('/v1/messages/batches', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: { BATCH_CONCURRENCY: '3' } });
  });
  after(() => gateway?.stop());

  it('creates, retrieves, lists and reads results through the Anthropic SDK', async () => {
    const tenant = await gateway.newTenant();
    const client = anthropicFor(gateway, tenant);
    const created = await client.messages.batches.create({ requests: [request('first'), request('second'), request('throttled', 'sim-chat-fail-429')] });
    expect(created.id).to.match(/^msgbatch_/);
    expect(created).to.include({ type: 'message_batch', processing_status: 'in_progress', results_url: null, archived_at: null, cancel_initiated_at: null });
    expect(created.request_counts).to.deep.equal({ processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).to.be.closeTo(24 * 3600_000, 1000);

    const ended = await waitEnded(client, created.id);
    expect(ended.request_counts).to.deep.equal({ processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });
    expect(ended.ended_at).to.be.a('string');
    expect(ended.results_url).to.equal(`${gateway.url}/v1/messages/batches/${created.id}/results`);

    const results: Array<{ custom_id: string; result: { type: string; message?: { type: string; content: Array<{ type: string; text?: string }> }; error?: { type: string; error: { type: string; message: string } } } }> = [];
    for await (const entry of await client.messages.batches.results(created.id)) results.push(entry as (typeof results)[number]);
    expect(results.map((r) => [r.custom_id, r.result.type])).to.deep.equal([['first', 'succeeded'], ['second', 'succeeded'], ['throttled', 'errored']]);
    expect(results[0].result.message!.type).to.equal('message');
    expect(results[0].result.message!.content[0].text).to.be.a('string');
    expect(results[2].result.error).to.deep.include({ type: 'error' });
    expect(results[2].result.error!.error.type).to.equal('rate_limit_error');

    const listed = await client.messages.batches.list({ limit: 10 });
    expect(listed.data.map((b) => b.id)).to.include(created.id);

    // The lines' usage records name the batch; no hold is left; spend equals the lines' charges.
    const db = gateway.runtime.db;
    const usage = await db('usage_records').where({ batch_id: created.id }).select('batch_custom_id', 'credits_micro');
    expect(usage.map((u) => u.batch_custom_id).sort()).to.deep.equal(['first', 'second', 'throttled']);
    expect(await db('reservations').where({ workspace_id: tenant.workspaceId, status: 'held' })).to.deep.equal([]);
  });

  it("refuses a bad request in Anthropic's error shape, naming it, and makes no batch", async () => {
    const tenant = await gateway.newTenant();
    const client = anthropicFor(gateway, tenant);
    const bad = { custom_id: 'bad', params: { model: 'sim-chat', messages: [{ role: 'user' as const, content: 'x' }] } };
    const caught = await rejection(client.messages.batches.create({ requests: [request('good'), bad as never] }));
    expect(caught).to.be.instanceOf(Anthropic.BadRequestError);
    const error = (caught as InstanceType<typeof Anthropic.BadRequestError>).error as { type: string; error: { type: string; message: string } };
    expect(error.type).to.equal('error');
    expect(error.error.type).to.equal('invalid_request_error');
    expect(error.error.message).to.match(/^requests\.1\.params\.max_tokens/);
    expect(await gateway.runtime.db('batches').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);

    const missing = await tenant.fetch('/v1/messages/batches/msgbatch_missing');
    expect(missing.status).to.equal(404);
    expect(((await missing.json()) as { error: { type: string } }).error.type).to.equal('not_found_error');
  });

  it('cancels: in-flight lines finish, the rest end canceled, every hold is released', async () => {
    const tenant = await gateway.newTenant();
    const client = anthropicFor(gateway, tenant);
    // Slow lines (the simulated model waits before answering): a cancel lands while the first are in flight.
    const requests = Array.from({ length: 12 }, (_, i) => request(`slow-${i}`, 'sim-chat-slow'));
    const created = await client.messages.batches.create({ requests });
    await new Promise((r) => setTimeout(r, 1500));
    const cancelling = await client.messages.batches.cancel(created.id);
    expect(cancelling.cancel_initiated_at).to.be.a('string');
    expect(['canceling', 'ended']).to.include(cancelling.processing_status);
    const ended = await waitEnded(client, created.id);
    const counts = ended.request_counts;
    expect(counts.processing).to.equal(0);
    expect(counts.canceled).to.be.greaterThan(0);
    expect(counts.succeeded + counts.errored + counts.canceled).to.equal(12);
    const results: Array<{ custom_id: string; result: { type: string } }> = [];
    for await (const entry of await client.messages.batches.results(created.id)) results.push(entry as (typeof results)[number]);
    expect(results).to.have.length(12);
    expect(results.filter((r) => r.result.type === 'canceled')).to.have.length(counts.canceled);
    const db = gateway.runtime.db;
    expect(await db('reservations').where({ workspace_id: tenant.workspaceId, status: 'held' })).to.deep.equal([]);
    const settled = await db('usage_records').where({ batch_id: created.id, status: 'succeeded' }).count<{ count: string }[]>('* as count');
    expect(Number(settled[0].count)).to.equal(counts.succeeded);
  });

  it('takes an Idempotency-Key: the same key and body answer the same batch, another body is refused', async () => {
    const tenant = await gateway.newTenant();
    const client = anthropicFor(gateway, tenant);
    const headers = { 'Idempotency-Key': `msgbatch-key-${tenant.workspaceId}` };
    const first = await client.messages.batches.create({ requests: [request('once')] }, { headers });
    const again = await client.messages.batches.create({ requests: [request('once')] }, { headers });
    expect(again.id).to.equal(first.id);
    const caught = await rejection(client.messages.batches.create({ requests: [request('other')] }, { headers }));
    expect(caught).to.be.instanceOf(Anthropic.UnprocessableEntityError);
    expect(((caught as InstanceType<typeof Anthropic.APIError>).error as { type: string }).type).to.equal('error');
    await waitEnded(client, first.id);
    const usage = await gateway.runtime.db('usage_records').where({ workspace_id: tenant.workspaceId }).select('batch_id');
    expect(usage.map((u) => u.batch_id)).to.deep.equal([first.id]);
    expect(await gateway.runtime.db('batches').where({ workspace_id: tenant.workspaceId }).pluck('id')).to.deep.equal([first.id]);
  });

  it('deletes an ended batch (message_batch_deleted); one in progress is refused in Anthropic\'s shape', async () => {
    const tenant = await gateway.newTenant();
    const client = anthropicFor(gateway, tenant);
    const older = await client.messages.batches.create({ requests: [request('older')] });
    const created = await client.messages.batches.create({ requests: [request('slow-a', 'sim-chat-slow'), request('slow-b', 'sim-chat-slow')] });
    const caught = await rejection(client.messages.batches.delete(created.id));
    expect(caught).to.be.instanceOf(Anthropic.BadRequestError);
    const refusal = (caught as InstanceType<typeof Anthropic.BadRequestError>).error as { type: string; error: { type: string; message: string } };
    expect(refusal.type).to.equal('error');
    expect(refusal.error.type).to.equal('invalid_request_error');
    expect(refusal.error.message).to.match(/has not ended/);

    await waitEnded(client, created.id);
    const deleted = await client.messages.batches.delete(created.id);
    expect(deleted).to.deep.equal({ id: created.id, type: 'message_batch_deleted' });
    expect(await rejection(client.messages.batches.retrieve(created.id))).to.be.instanceOf(Anthropic.NotFoundError);
    expect(await rejection(client.messages.batches.delete(created.id))).to.be.instanceOf(Anthropic.NotFoundError);
    expect(await gateway.runtime.db('batch_lines').where({ batch_id: created.id })).to.deep.equal([]);
    // A page after the deleted batch still starts where it was.
    const page = await client.messages.batches.list({ after_id: created.id, limit: 10 });
    expect(page.data.map((b) => b.id)).to.deep.equal([older.id]);
    await waitEnded(client, older.id);
  });
});
