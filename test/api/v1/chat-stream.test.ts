import { expect } from 'chai';
import { FakeUpstream } from '../../support/fake-upstream';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';
import { ledgerSum } from '../../../domain/ledger';
import { localActivitySteps } from '../../support/history';

function chunk(content: string) {
  return { id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] };
}

describe('streaming chat completions', function () {
  this.timeout(120_000);
  let upstream: FakeUpstream;
  let gateway: TestGateway;
  let tenant: Tenant;

  before(async function () {
    this.timeout(180_000);
    upstream = new FakeUpstream();
    await upstream.start();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-upstream' } });
    tenant = await gateway.newTenant({ credits: 50 });
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.stop();
  });

  it('relays the upstream chunks as they come and settles the reported usage', async () => {
    upstream.on('POST /v1/chat/completions', {
      sse: [chunk('Hel'), chunk('lo'), { ...chunk(''), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        { id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }, '[DONE]'],
      delayMs: 20,
    });
    const stream = await tenant.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: any = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).to.equal('Hello');
    expect(usage).to.include({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
    expect(usage.credits_used).to.be.greaterThan(0);
    const sent = upstream.received('POST /v1/chat/completions').at(-1)!;
    expect(sent.json).to.include({ stream: true, model: 'gpt-4o-mini' });
    expect(sent.json.stream_options).to.deep.equal({ include_usage: true });
  });

  it('has the usage recorded and settled before it writes [DONE]', async () => {
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'books first' }], stream: true, stream_options: { include_usage: true } }),
    });
    const requestId = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('data: [DONE]')) text += Buffer.from((await reader.read()).value!).toString();
    // Read the books the moment [DONE] arrives, before the stream's workflow has even finished.
    const usage = await gateway.runtime.db('usage_records').where({ request_id: requestId }).first();
    const reservation = await gateway.runtime.db('reservations').where({ request_id: requestId }).first();
    const reported = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((c) => c.usage)!.usage;
    expect(usage).to.include({ status: 'succeeded', model_used: 'sim-chat' });
    expect(reservation.status).to.equal('settled');
    expect(Number(usage.credits_micro)).to.equal(Math.round(reported.credits_used * 1_000_000));
    expect(Number(usage.output_tokens)).to.equal(reported.completion_tokens);
    await reader.cancel();
    const result = await gateway.runtime.temporal.client.workflow.getHandle(`req-${requestId}`).result();
    expect(result.creditsUsedMicro).to.equal(Number(usage.credits_micro));
  });

  it('charges a client that disconnects for what was generated, and cancels the upstream call', async () => {
    upstream.abortedStreams = 0;
    upstream.on('POST /v1/chat/completions', { sse: Array.from({ length: 200 }, (_, i) => chunk(`word${i} `)), delayMs: 30 });
    const controller = new AbortController();
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' }, signal: controller.signal,
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 2000, messages: [{ role: 'user', content: 'talk for a while' }], stream: true }),
    });
    expect(res.status).to.equal(200);
    const requestId = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    let received = 0;
    while (received < 5) {
      const { value } = await reader.read();
      received += (Buffer.from(value!).toString().match(/data: /g) ?? []).length;
    }
    controller.abort();

    let usage: any;
    for (let i = 0; i < 100 && !usage; i++) {
      usage = await gateway.runtime.db('usage_records').where({ request_id: requestId }).first();
      if (!usage) await new Promise((r) => setTimeout(r, 100));
    }
    expect(usage.status).to.equal('cancelled');
    expect(Number(usage.output_tokens)).to.be.greaterThan(0);
    const charged = Number(usage.credits_micro);
    const reservation = await gateway.runtime.db('reservations').where({ request_id: requestId }).first();
    expect(charged).to.be.greaterThan(0);
    expect(charged).to.be.lessThan(Number(reservation.amount_micro));
    for (let i = 0; i < 50 && upstream.abortedStreams === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(upstream.abortedStreams).to.equal(1);
    const sums = await ledgerSum(gateway.runtime.db, tenant.workspaceId);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  });

  it('falls back before the first byte and names the model that served', async () => {
    upstream.on('POST /v1/chat/completions', { status: 503, json: { error: { message: 'overloaded', type: 'server_error' } } });
    const { setFallbackChain } = await import('../../../domain/workspaces');
    await setFallbackChain(gateway.runtime.db, { workspaceId: tenant.workspaceId, sourceModel: 'gpt-4o-mini', chain: ['sim-chat'], actor: 'test', modalityOf: async () => 'chat' });
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-model-used')).to.equal('sim-chat');
    expect(res.headers.get('x-fallback-from')).to.equal('gpt-4o-mini');
    expect(res.headers.get('x-fallback-depth')).to.equal('1');
    const text = await res.text();
    expect(text).to.contain('data: [DONE]');
  });

  it('answers a failure before the first byte as an ordinary JSON error', async () => {
    const other = await gateway.newTenant({ credits: 5 });
    const res = await other.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-simulate-failure': '400' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(res.status).to.equal(400);
    expect(res.headers.get('content-type')).to.contain('application/json');
    expect(((await res.json()) as any).error).to.have.keys('message', 'type', 'param', 'code');
    expect((await ledgerSum(gateway.runtime.db, other.workspaceId)).ledgerMicro).to.equal(5_000_000);
  });
});

describe('streaming chat across processes', function () {
  this.timeout(120_000);
  const taskQueue = `stream-split-${process.pid}`;
  let workerOnly: TestGateway;
  let apiOnly: TestGateway;
  let combined: TestGateway;
  before(async function () {
    this.timeout(180_000);
    workerOnly = await startTestGateway({ taskQueue, api: false, worker: true });
    apiOnly = await startTestGateway({ taskQueue, api: true, worker: false });
    combined = await startTestGateway();
  });
  after(async () => {
    await apiOnly?.stop();
    await workerOnly?.stop();
    await combined?.stop();
  });

  async function streamedText(tenant: Tenant): Promise<{ text: string; requestId: string }> {
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'stream across processes' }], stream: true }),
    });
    expect(res.status).to.equal(200);
    return { text: await res.text(), requestId: res.headers.get('x-request-id')! };
  }

  it('streams from an API process that runs no worker (its own task queue carries the stream)', async () => {
    const tenant = await apiOnly.newTenant({ credits: 5 });
    const { text, requestId } = await streamedText(tenant);
    expect(text).to.contain('data: [DONE]');
    const history = await apiOnly.runtime.temporal.client.workflow.getHandle(`req-${requestId}`).fetchHistory();
    const queues = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name).filter(Boolean);
    expect(queues).to.have.length(1);
    expect(queues[0]).to.contain('-stream-');
  });

  it('serves the stream as a local activity of the run\'s first task when the API process runs the worker', async () => {
    const tenant = await combined.newTenant({ credits: 5 });
    const { text, requestId } = await streamedText(tenant);
    expect(text).to.contain('data: [DONE]');
    const workflowId = `req-${requestId}`;
    const steps = await localActivitySteps(combined.runtime.temporal.client, workflowId);
    expect(steps.map((s) => s.name)).to.deep.equal(['streamChat']);
    expect(steps[0].result).to.deep.include({ ending: 'completed' });
    const history = await combined.runtime.temporal.client.workflow.getHandle(workflowId).fetchHistory();
    // One workflow task and no activity task: the server saw the start and the completion.
    expect((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes)).to.deep.equal([]);
    expect((history.events ?? []).filter((e) => e.workflowTaskCompletedEventAttributes)).to.have.length(1);
  });
});
