import { expect } from 'chai';
import { FakeUpstream } from '../../support/fake-upstream';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';

const completion = {
  id: 'chatcmpl-upstream', object: 'chat.completion', created: 1_700_000_000, model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
};

describe('Idempotency-Key on POST /v1/chat/completions', function () {
  this.timeout(120_000);
  let upstream: FakeUpstream;
  let gateway: TestGateway;
  let tenant: Tenant;

  before(async function () {
    this.timeout(180_000);
    upstream = new FakeUpstream();
    // A slow upstream, so a retry can arrive while the first call is still running.
    upstream.on('POST /v1/chat/completions', async () => {
      await new Promise((r) => setTimeout(r, 400));
      return { json: completion };
    });
    await upstream.start();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-upstream' } });
    tenant = await gateway.newTenant({ credits: 50 });
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.stop();
  });

  const post = (key: string, content = 'Capital of France?') => tenant.fetch('/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
  });

  async function settledCharges(workspaceId: string): Promise<number> {
    const rows = await gateway.runtime.db('credit_ledger').where({ workspace_id: workspaceId, kind: 'settle' }).count<{ count: string }[]>('* as count');
    return Number(rows[0].count);
  }

  it('replays the same result without a second upstream call or charge, also while the first still runs', async () => {
    upstream.requests.length = 0;
    const [first, concurrent] = await Promise.all([post('order-1'), post('order-1')]);
    const later = await post('order-1');
    const bodies = await Promise.all([first, concurrent, later].map((r) => r.json() as Promise<any>));
    for (const r of [first, concurrent, later]) expect(r.status).to.equal(200);
    expect(bodies[1].id).to.equal(bodies[0].id);
    expect(bodies[2]).to.deep.equal(bodies[0]);
    expect(later.headers.get('x-idempotent-replayed')).to.equal('true');
    expect(later.headers.get('x-credits-used')).to.equal(first.headers.get('x-credits-used'));
    expect(upstream.received('POST /v1/chat/completions')).to.have.length(1);
    expect(await settledCharges(tenant.workspaceId)).to.equal(1);
  });

  it('refuses the same key with a different body (422)', async () => {
    expect((await post('order-2')).status).to.equal(200);
    const res = await post('order-2', 'Capital of Spain?');
    expect(res.status).to.equal(422);
    expect(((await res.json()) as any).error.code).to.equal('idempotency_key_reused');
  });

  it('keeps keys apart per workspace', async () => {
    const other = await gateway.newTenant({ credits: 5 });
    upstream.requests.length = 0;
    await post('shared-key');
    const res = await other.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'shared-key' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Capital of France?' }] }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-idempotent-replayed')).to.equal(null);
    expect(upstream.received('POST /v1/chat/completions')).to.have.length(2);
  });
});
