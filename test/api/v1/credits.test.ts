import { expect } from 'chai';
import { getBalance, ledgerSum } from '../../../domain/ledger';
import { microToCredits } from '../../../core/money';
import { topUp } from '../../../domain/ledger';
import { startTestGateway, type TestGateway } from '../../support/gateway';

describe('credits under concurrent requests', function () {
  this.timeout(300_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    // 200 requests at once exceed one process's in-flight bound; this file is about the ledger under that race
    // (admission control has its own test: test/api/http/admission.test.ts).
    gateway = await startTestGateway({ env: { GATEWAY_MAX_IN_FLIGHT: '0' } });
  });
  after(() => gateway?.stop());

  const body = { model: 'sim-chat', max_tokens: 8, messages: [{ role: 'user', content: 'Count to three, briefly.' }] };

  it('lets 200 concurrent requests spend a balance that covers 50, and not a micro-credit more', async () => {
    // What one such request costs, measured on another workspace.
    const probe = await gateway.newTenant({ credits: 10 });
    const probeRes = await probe.fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(probeRes.status).to.equal(200);
    const costMicro = Math.round(Number(probeRes.headers.get('x-credits-used')) * 1_000_000);
    expect(costMicro).to.be.greaterThan(0);

    const tenant = await gateway.newTenant({ credits: 0 });
    await topUp(gateway.runtime.db, { workspaceId: tenant.workspaceId, amountMicro: 50 * costMicro, idempotencyKey: `fund-${tenant.workspaceId}` });
    const responses = await Promise.all(Array.from({ length: 200 }, () =>
      tenant.fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })));
    const statuses = responses.map((r) => r.status);
    const ok = statuses.filter((s) => s === 200).length;
    const refused = responses.filter((r) => r.status === 402);
    expect(ok + refused.length, `unexpected statuses: ${[...new Set(statuses)]}`).to.equal(200);
    expect(ok).to.be.at.most(50).and.at.least(1);
    for (const r of refused.slice(0, 3)) expect(((await r.json()) as any).error.code).to.equal('insufficient_credits');

    const balance = await getBalance(gateway.runtime.db, tenant.workspaceId);
    expect(balance.totalMicro).to.equal(50 * costMicro - ok * costMicro);
    expect(balance.totalMicro).to.be.at.least(0);
    const sums = await ledgerSum(gateway.runtime.db, tenant.workspaceId);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
    // Every hold was closed: nothing is left reserved.
    const held = await gateway.runtime.db('reservations').where({ workspace_id: tenant.workspaceId, status: 'held' }).count<{ count: string }[]>('* as count');
    expect(Number(held[0].count)).to.equal(0);
    const charged = responses.filter((r) => r.status === 200).reduce((n, r) => n + Number(r.headers.get('x-credits-used')), 0);
    expect(microToCredits(Math.round(charged * 1_000_000))).to.equal(microToCredits(ok * costMicro));
  });

  it('answers 402 insufficient_credits in OpenAI\'s shape and charges nothing', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const res = await tenant.fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).to.equal(402);
    const json = (await res.json()) as any;
    expect(json.error).to.include({ code: 'insufficient_credits', type: 'insufficient_quota' });
    expect((await ledgerSum(gateway.runtime.db, tenant.workspaceId)).ledgerMicro).to.equal(0);
  });
});
