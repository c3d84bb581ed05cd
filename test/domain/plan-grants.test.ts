import { expect } from 'chai';
import type { Knex } from 'knex';
import { grantCycleForWorkspace } from '../../domain/plan-grants';
import { getPlan } from '../../domain/plans';
import { ledgerSum, reserve, settle } from '../../domain/ledger';
import { creditsToMicro } from '../../core/money';
import { createWorkspace } from '../../domain/workspaces';
import { openTestDb } from '../support/db';

// Cycles far in the future: these buckets belong to this test's workspaces only.
const C1 = '2099-01';
const C2 = '2099-02';
const C3 = '2099-03';

describe('plan grants (domain/plan-grants)', function () {
  this.timeout(60_000);
  let db: Knex;
  before(async () => { db = await openTestDb(); });
  after(() => db?.destroy());

  async function workspace(planId: string, topupCredits = 50) {
    return (await createWorkspace(db, { name: `grants-${planId}`, credits: topupCredits, planId, actor: 'test' })).id;
  }
  async function grant(workspaceId: string, planId: string, cycle: string) {
    return grantCycleForWorkspace(db, { workspaceId, plan: await getPlan(db, planId), cycle });
  }
  async function buckets(workspaceId: string) {
    const rows = await db('credit_buckets').where({ workspace_id: workspaceId }).orderBy('id');
    return Object.fromEntries(rows.map((r) => [r.kind === 'topup' ? 'topup' : r.cycle, { balance: r.balance_micro, expiresAt: r.expires_at }]));
  }
  async function spend(workspaceId: string, credits: number, tag: string) {
    const reservationId = `test-spend-${workspaceId}-${tag}`;
    await reserve(db, { reservationId, workspaceId, amountMicro: creditsToMicro(credits) });
    await settle(db, { reservationId, chargeMicro: creditsToMicro(credits) });
  }

  it('grants the plan credits once per cycle, into a bucket that expires at the cycle end', async () => {
    const ws = await workspace('starter');
    const first = await grant(ws, 'starter', C1);
    const second = await grant(ws, 'starter', C1);
    expect(first).to.include({ granted: true, grantedMicro: creditsToMicro(2_000) });
    expect(second).to.include({ granted: false, grantedMicro: 0, rolledOverMicro: 0, expiredMicro: 0 });
    const b = await buckets(ws);
    expect(b[C1].balance).to.equal(creditsToMicro(2_000));
    expect(new Date(b[C1].expiresAt).toISOString()).to.equal('2099-02-01T00:00:00.000Z');
    const grants = await db('credit_ledger').where({ workspace_id: ws, kind: 'grant' });
    expect(grants).to.have.length(1);
  });

  it('expires the previous cycle on a plan without rollover, leaving topups alone', async () => {
    const ws = await workspace('free', 50);
    await grant(ws, 'free', C1);
    await spend(ws, 120, 'c1');
    const outcome = await grant(ws, 'free', C2);
    expect(outcome).to.include({ granted: true, rolledOverMicro: 0, expiredMicro: creditsToMicro(380) });
    const b = await buckets(ws);
    expect(b[C1].balance).to.equal(0);
    expect(b[C2].balance).to.equal(creditsToMicro(500));
    expect(b.topup.balance).to.equal(creditsToMicro(50));
    expect(b.topup.expiresAt).to.equal(null);
    const expire = await db('credit_ledger').where({ workspace_id: ws, kind: 'expire' });
    expect(expire.map((r) => r.amount_micro)).to.deep.equal([-creditsToMicro(380)]);
  });

  it('rolls unused plan credits over up to the plan cap and expires the rest', async () => {
    const ws = await workspace('pro', 50);
    await grant(ws, 'pro', C1);
    // 7,000 of 10,000 spent: 3,000 left, under the Pro cap of 5,000, all roll over.
    await spend(ws, 7_000, 'c1');
    const second = await grant(ws, 'pro', C2);
    expect(second).to.include({ granted: true, rolledOverMicro: creditsToMicro(3_000), expiredMicro: 0 });
    let b = await buckets(ws);
    expect(b[C1].balance).to.equal(0);
    expect(b[C2].balance).to.equal(creditsToMicro(13_000));

    // Nothing spent in C2: 13,000 left, 5,000 (the cap) roll over, 8,000 expire.
    const third = await grant(ws, 'pro', C3);
    expect(third).to.include({ granted: true, rolledOverMicro: creditsToMicro(5_000), expiredMicro: creditsToMicro(8_000) });
    b = await buckets(ws);
    expect(b[C2].balance).to.equal(0);
    expect(b[C3].balance).to.equal(creditsToMicro(15_000));
    expect(b.topup.balance).to.equal(creditsToMicro(50));

    const rows = await db('credit_ledger').where({ workspace_id: ws }).whereIn('kind', ['rollover', 'expire']).orderBy('id');
    expect(rows.map((r) => [r.kind, r.amount_micro])).to.deep.equal([
      ['rollover', -creditsToMicro(3_000)], ['rollover', creditsToMicro(3_000)],
      ['rollover', -creditsToMicro(5_000)], ['rollover', creditsToMicro(5_000)], ['expire', -creditsToMicro(8_000)],
    ]);
    const topupRows = await db('credit_ledger as l').join('credit_buckets as b', 'b.id', 'l.bucket_id').where({ 'l.workspace_id': ws, 'b.kind': 'topup' }).select('l.kind');
    expect(topupRows.map((r) => r.kind)).to.deep.equal(['topup']);
  });

  it('grants once when runs of one cycle race, and a later rerun changes nothing', async () => {
    const ws = await workspace('business', 0);
    await grant(ws, 'business', C1);
    const raced = await Promise.all([grant(ws, 'business', C2), grant(ws, 'business', C2), grant(ws, 'business', C2)]);
    expect(raced.filter((o) => o.granted)).to.have.length(1);
    expect(raced.reduce((n, o) => n + o.rolledOverMicro, 0)).to.equal(creditsToMicro(25_000));
    expect(raced.reduce((n, o) => n + o.expiredMicro, 0)).to.equal(creditsToMicro(25_000));

    const count = async () => Number((await db('credit_ledger').where({ workspace_id: ws }).count<{ count: string }[]>({ count: '*' }))[0].count);
    const before = await count();
    expect(await grant(ws, 'business', C2)).to.include({ granted: false, rolledOverMicro: 0, expiredMicro: 0 });
    expect(await count()).to.equal(before);
    // 50,000 granted in C2 plus 25,000 (the Business cap) carried from C1.
    expect((await buckets(ws))[C2].balance).to.equal(creditsToMicro(75_000));
    const sums = await ledgerSum(db, ws);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  });

  it('expires a plan bucket older than the previous cycle without rolling it over', async () => {
    const ws = await workspace('enterprise', 0);
    await grant(ws, 'enterprise', C1);
    // C2 was never granted (the workspace was off its plan): C1 is two cycles back by C3.
    const outcome = await grant(ws, 'enterprise', C3);
    expect(outcome).to.include({ granted: true, rolledOverMicro: 0, expiredMicro: creditsToMicro(200_000) });
  });
});
