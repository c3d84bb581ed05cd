import { expect } from 'chai';
import type { Db } from '../../db/connection';
import { getBalance, grantPlanCredits, ledgerSum, refund, reserve, settle, topUp } from '../../domain/ledger';
import { InsufficientCreditsError, PermissionDeniedError } from '../../core/errors';
import { createApiKey, createWorkspace } from '../../domain/workspaces';
import { openTestDb } from '../support/db';

describe('credit ledger', function () {
  this.timeout(120_000);
  let db: Db;
  before(async () => { db = await openTestDb(); });
  after(() => db?.destroy());

  async function workspaceWith(credits: number) {
    return (await createWorkspace(db, { name: 'ledger', credits, actor: 'test' })).id;
  }

  it('never lets 200 concurrent reservations overspend a balance that covers 50', async () => {
    const ws = await workspaceWith(50); // 50 credits; each request holds 1 credit
    const outcomes = await Promise.allSettled(Array.from({ length: 200 }, (_, i) =>
      reserve(db, { reservationId: `conc-${ws}-${i}`, workspaceId: ws, amountMicro: 1_000_000 })));
    const ok = outcomes.filter((o) => o.status === 'fulfilled').length;
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(ok).to.equal(50);
    expect(refused).to.have.length(150);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).to.be.instanceOf(InsufficientCreditsError);
    expect((await getBalance(db, ws)).totalMicro).to.equal(0);
    const sums = await ledgerSum(db, ws);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
    expect(sums.ledgerMicro).to.equal(0);
  });

  it('settles the exact charge, gives the rest back, and is idempotent under retries', async () => {
    const ws = await workspaceWith(10);
    const id = `settle-${ws}`;
    await reserve(db, { reservationId: id, workspaceId: ws, amountMicro: 3_000_000 });
    await reserve(db, { reservationId: id, workspaceId: ws, amountMicro: 3_000_000 }); // retried activity
    expect((await getBalance(db, ws)).totalMicro).to.equal(7_000_000);
    const first = await settle(db, { reservationId: id, chargeMicro: 1_234_567 });
    const again = await settle(db, { reservationId: id, chargeMicro: 1_234_567 });
    expect(first.chargedMicro).to.equal(1_234_567);
    expect(again.chargedMicro).to.equal(1_234_567);
    expect((await getBalance(db, ws)).totalMicro).to.equal(10_000_000 - 1_234_567);
    const rows = await db('credit_ledger').where({ reservation_id: id }).orderBy('id').select('kind', 'amount_micro');
    expect(rows.map((r) => [r.kind, r.amount_micro])).to.deep.equal([['reserve', -3_000_000], ['release', 3_000_000], ['settle', -1_234_567]]);
    const sums = await ledgerSum(db, ws);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  });

  it('refunds a failed request whole, once', async () => {
    const ws = await workspaceWith(5);
    await reserve(db, { reservationId: `refund-${ws}`, workspaceId: ws, amountMicro: 2_000_000 });
    await refund(db, { reservationId: `refund-${ws}`, reason: 'upstream failed' });
    await refund(db, { reservationId: `refund-${ws}`, reason: 'upstream failed' });
    expect((await getBalance(db, ws)).totalMicro).to.equal(5_000_000);
    const kinds = await db('credit_ledger').where({ reservation_id: `refund-${ws}` }).pluck('kind');
    expect(kinds).to.deep.equal(['reserve', 'refund']);
  });

  it('records a charge above what the balance covers as debt, paid first by the next topup', async () => {
    const ws = await workspaceWith(1);
    const id = `debt-${ws}`;
    await reserve(db, { reservationId: id, workspaceId: ws, amountMicro: 500_000 });
    const usage = { requestId: id, workspaceId: ws, apiKeyId: null, endpoint: 'chat.completions', modelRequested: 'sim-chat', modelUsed: 'sim-chat', fallbackDepth: 0, status: 'succeeded' as const, inputTokens: 10, outputTokens: 900 };
    const settled = await settle(db, { reservationId: id, chargeMicro: 3_000_000, usage });
    expect(settled).to.deep.equal({ chargedMicro: 3_000_000, debtMicro: 2_000_000, repeated: false });
    expect(await getBalance(db, ws)).to.deep.equal({ totalMicro: -2_000_000, planMicro: 0, topupMicro: 0, debtMicro: 2_000_000 });
    const record = await db('usage_records').where({ request_id: id }).first();
    expect([record.credits_micro, record.debt_micro]).to.deep.equal([3_000_000, 2_000_000]);
    expect((await settle(db, { reservationId: id, chargeMicro: 3_000_000 })).chargedMicro).to.equal(3_000_000); // retried: once
    // No new hold while the workspace owes.
    await reserve(db, { reservationId: `${id}-next`, workspaceId: ws, amountMicro: 1 }).then(() => expect.fail('reserved'), (err) => expect(err).to.be.instanceOf(InsufficientCreditsError));

    await topUp(db, { workspaceId: ws, amountMicro: 5_000_000, idempotencyKey: `pay-${ws}` });
    await topUp(db, { workspaceId: ws, amountMicro: 5_000_000, idempotencyKey: `pay-${ws}` });
    expect(await getBalance(db, ws)).to.deep.equal({ totalMicro: 3_000_000, planMicro: 0, topupMicro: 3_000_000, debtMicro: 0 });
    const repaid = await db('credit_ledger').where({ workspace_id: ws, kind: 'repay' }).orderBy('id').pluck('amount_micro');
    expect(repaid).to.deep.equal([-2_000_000, 2_000_000]);
    const sums = await ledgerSum(db, ws);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  });

  it('pays a debt first out of a plan grant, as far as the grant goes', async () => {
    const ws = await workspaceWith(0);
    await topUp(db, { workspaceId: ws, amountMicro: 1_000_000, idempotencyKey: `seed-${ws}` });
    await reserve(db, { reservationId: `owe-${ws}`, workspaceId: ws, amountMicro: 1_000_000 });
    await settle(db, { reservationId: `owe-${ws}`, chargeMicro: 6_000_000 });
    await grantPlanCredits(db, { workspaceId: ws, cycle: '2099-02', amountMicro: 2_000_000, expiresAt: new Date(Date.now() + 86_400_000), idempotencyKey: `grant:${ws}:2099-02` });
    expect(await getBalance(db, ws)).to.deep.equal({ totalMicro: -3_000_000, planMicro: 0, topupMicro: 0, debtMicro: 3_000_000 });
    const sums = await ledgerSum(db, ws);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  });

  it('spends expiring plan credits before topups', async () => {
    const ws = await workspaceWith(10);
    await grantPlanCredits(db, { workspaceId: ws, cycle: '2099-01', amountMicro: 4_000_000, expiresAt: new Date(Date.now() + 86_400_000), idempotencyKey: `grant:${ws}:2099-01` });
    await reserve(db, { reservationId: `order-${ws}`, workspaceId: ws, amountMicro: 5_000_000 });
    await settle(db, { reservationId: `order-${ws}`, chargeMicro: 5_000_000 });
    const balance = await getBalance(db, ws);
    expect(balance.planMicro).to.equal(0);
    expect(balance.topupMicro).to.equal(9_000_000);
  });

  it('applies a topup once per idempotency key', async () => {
    const ws = await workspaceWith(0);
    expect(await topUp(db, { workspaceId: ws, amountMicro: 1_000_000, idempotencyKey: `t-${ws}` })).to.equal(true);
    expect(await topUp(db, { workspaceId: ws, amountMicro: 1_000_000, idempotencyKey: `t-${ws}` })).to.equal(false);
    expect((await getBalance(db, ws)).totalMicro).to.equal(1_000_000);
  });

  it('holds a key to its cost cap across concurrent reservations', async () => {
    const ws = await workspaceWith(100);
    const key = await createApiKey(db, { workspaceId: ws, name: 'capped', quotas: { costCap: 5 }, actor: 'test' });
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) =>
      reserve(db, { reservationId: `cap-${ws}-${i}`, workspaceId: ws, apiKeyId: key.id, amountMicro: 1_000_000 })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(5);
    for (const o of outcomes.filter((o) => o.status === 'rejected')) {
      const reason = (o as PromiseRejectedResult).reason;
      expect(reason).to.be.instanceOf(PermissionDeniedError);
      expect(reason.code).to.equal('key_cost_cap_exceeded');
    }
  });

  it('refuses to edit the ledger', async () => {
    const ws = await workspaceWith(1);
    try {
      await db('credit_ledger').where({ workspace_id: ws }).update({ amount_micro: 999 });
      expect.fail('update should be refused');
    } catch (err) {
      expect(String(err)).to.contain('append-only');
    }
  });
});
