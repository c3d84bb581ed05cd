import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../../db/connection';
import { hashApiKey } from '../../../domain/api-keys';
import { createApiKey, createWorkspace } from '../../../domain/workspaces';
import { countedKeyLookup, keyStanding } from '../../../api/http/key-lookup';
import { authMiddleware } from '../../../api/http/auth';
import { PostgresWindowCounters, type WindowCounters } from '../../../domain/rate-limits';
import type Koa from 'koa';
import { openTestDb } from '../../support/db';

const MINUTE = 60_000;

describe('the key lookup counting its window hits (api/http/key-lookup)', function () {
  this.timeout(60_000);
  let db: Db;
  let workspaceId: string;
  before(async () => {
    db = await openTestDb();
    workspaceId = (await createWorkspace(db, { name: 'lookup', credits: 1, actor: 'test' })).id;
  });
  after(() => db.destroy());

  const ip = (limit = 100) => ({ bucket: `ip:test-${randomBytes(6).toString('hex')}`, windowMs: 10 * MINUTE, limit });
  const ownerCounts = { standings: [keyStanding('project', 'owner', '')] };
  const rpmCount = async (keyId: string) => Number((await db('rate_limit_counters').where({ bucket: `key:${keyId}:rpm` }).sum('count as n').first())?.n ?? 0);

  it('counts the address and the key\'s minute in one statement, and returns the key', async () => {
    const key = await createApiKey(db, { workspaceId, name: 'k', role: 'owner', quotas: { rpm: 2 }, actor: 'test' });
    const address = ip();
    const hits = [];
    for (let i = 0; i < 3; i++) hits.push(await countedKeyLookup(db, { hash: hashApiKey(key.key), ip: address, countingRpm: ownerCounts }));
    expect(hits.map((h) => h.row?.id)).to.deep.equal([key.id, key.id, key.id]);
    expect(hits.map((h) => h.ipHit.count)).to.deep.equal([1, 2, 3]);
    expect(hits.map((h) => [h.rpmHit?.count, h.rpmHit?.limit, h.rpmHit?.allowed])).to.deep.equal([[1, 2, true], [2, 2, true], [3, 2, false]]);
    expect(hits[0].rpmHit!.resetMs).to.be.within(1, MINUTE);
    expect(await rpmCount(key.id)).to.equal(3);
  });

  it('counts the address of an unknown key, and no minute', async () => {
    const address = ip();
    const looked = await countedKeyLookup(db, { hash: hashApiKey(`sk-${randomBytes(24).toString('hex')}`), ip: address, countingRpm: ownerCounts });
    expect(looked.row).to.equal(null);
    expect(looked.ipHit).to.include({ count: 1, allowed: true });
    expect(looked.rpmHit).to.equal(null);
  });

  it('counts no minute for a key that would not reach the quotas', async () => {
    const revoked = await createApiKey(db, { workspaceId, name: 'revoked', role: 'owner', quotas: { rpm: 5 }, actor: 'test' });
    await db('api_keys').where({ id: revoked.id }).update({ revoked_at: db.fn.now() });
    const viewer = await createApiKey(db, { workspaceId, name: 'viewer', role: 'viewer', quotas: { rpm: 5 }, actor: 'test' });
    const unlimited = await createApiKey(db, { workspaceId, name: 'unlimited', role: 'owner', actor: 'test' });
    const counted = await createApiKey(db, { workspaceId, name: 'counted', role: 'owner', quotas: { rpm: 5 }, actor: 'test' });
    for (const key of [revoked, viewer, unlimited]) {
      const looked = await countedKeyLookup(db, { hash: hashApiKey(key.key), ip: ip(), countingRpm: ownerCounts });
      expect(looked.row?.id).to.equal(key.id);
      expect(looked.rpmHit).to.equal(null);
    }
    // Not on a model endpoint; or the address past its limit (its refusal is the answer).
    expect((await countedKeyLookup(db, { hash: hashApiKey(counted.key), ip: ip(), countingRpm: null })).rpmHit).to.equal(null);
    const full = ip(1);
    await countedKeyLookup(db, { hash: hashApiKey('sk-none'), ip: full, countingRpm: null });
    const refused = await countedKeyLookup(db, { hash: hashApiKey(counted.key), ip: full, countingRpm: ownerCounts });
    expect(refused.ipHit).to.include({ count: 2, allowed: false });
    expect(refused.rpmHit).to.equal(null);
    for (const key of [revoked, viewer, unlimited, counted]) expect(await rpmCount(key.id)).to.equal(0);
  });
});

describe('the authentication counting the window hits with the key lookup (api/http/auth)', function () {
  this.timeout(60_000);
  let db: Db;
  let key: { id: string; key: string };
  before(async () => {
    db = await openTestDb();
    const workspaceId = (await createWorkspace(db, { name: 'auth-counts', credits: 1, actor: 'test' })).id;
    key = await createApiKey(db, { workspaceId, name: 'k', role: 'developer', quotas: { rpm: 5 }, actor: 'test' });
  });
  after(() => db.destroy());

  const context = (bearer: string) => {
    const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
    return { ip: `203.0.113.${Math.floor(Math.random() * 250) + 1}-${randomBytes(4).toString('hex')}`, path: '/v1/chat/completions', method: 'POST', state: {} as Record<string, any>, get: (h: string) => headers[h.toLowerCase()] ?? '' };
  };
  const authenticate = (counters: WindowCounters, ctx: ReturnType<typeof context>, reaches = true, limit = 100) =>
    authMiddleware(db, { ipNet: { counters, limit }, reachesKeyQuotas: () => reaches })(ctx as unknown as Koa.Context, async () => undefined);
  const ipCount = async (ip: string) => Number((await db('rate_limit_counters').where({ bucket: `ip:${ip}` }).first('count'))?.count ?? 0);

  it('with Postgres counters, counts the address and the key\'s minute in the lookup, handing the hit to the quotas', async () => {
    const counters = new PostgresWindowCounters(db);
    const ctx = context(key.key);
    await authenticate(counters, ctx);
    expect(ctx.state.auth.keyId).to.equal(key.id);
    expect(ctx.state.rpmHit).to.include({ limit: 5, allowed: true });
    expect(await ipCount(ctx.ip)).to.equal(1);
    // Not on a model endpoint: the address counts, the minute does not.
    const other = context(key.key);
    await authenticate(counters, other, false);
    expect(other.state.rpmHit).to.equal(undefined);
    expect(await ipCount(other.ip)).to.equal(1);
  });

  it('answers an address past its limit first, whatever the key, in either path', async () => {
    const postgres = new PostgresWindowCounters(db);
    const elsewhere: WindowCounters = { store: 'redis', hit: (...a) => postgres.hit(...a) };
    for (const counters of [postgres, elsewhere]) {
      const ctx = context('sk-not-a-key-at-all-0000000000000000');
      await authenticate(counters, ctx, true, 1).catch(() => undefined);
      const err = await authenticate(counters, ctx, true, 1).then(() => null, (e: unknown) => e as { status?: number; code?: string });
      expect(err).to.include({ status: 429, code: 'rate_limit_exceeded' });
    }
  });

  it('with counters elsewhere, counts the address beside the lookup and leaves the minute to the quotas', async () => {
    const postgres = new PostgresWindowCounters(db);
    let hits = 0;
    const elsewhere: WindowCounters = { store: 'redis', hit: (...a) => { hits++; return postgres.hit(...a); } };
    const ctx = context(key.key);
    await authenticate(elsewhere, ctx);
    expect(ctx.state.auth.keyId).to.equal(key.id);
    expect(ctx.state.rpmHit).to.equal(undefined);
    expect(hits).to.equal(1);
  });
});
