import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { createDb, type Db } from '../../db/connection';
import { PostgresWindowCounters, type WindowCounters } from '../../domain/rate-limits';
import { RedisWindowCounters } from '../../domain/redis-counters';
import { connectRedisCounters, type RedisCounterClient } from '../../infra/redis';
import { freePort } from '../../stack/processes';
import { getSharedStack } from '../support/stack';
import { openTestDb } from '../support/db';
import { deleteRedisKeys, redisKeys, TEST_REDIS_URL } from '../support/redis';

const MINUTE = 60_000;
const bucket = () => `test:${randomBytes(6).toString('hex')}`;

/** Two app instances' worth of counters on the same store: separate connections, as two processes have. */
interface Store {
  name: 'postgres' | 'redis';
  open(): Promise<WindowCounters>;
}

describe('window counters', function () {
  this.timeout(120_000);
  const prefix = `test-${process.pid}-${randomBytes(4).toString('hex')}:`;
  const dbs: Db[] = [];
  const clients: RedisCounterClient[] = [];
  let databaseUrl = '';

  before(async () => {
    dbs.push(await openTestDb());
    databaseUrl = (await getSharedStack()).databaseUrl;
  });
  after(async () => {
    for (const c of clients) await c.close();
    for (const db of dbs) await db.destroy();
    await deleteRedisKeys(prefix);
  });

  const postgresCounters = () => {
    const db = createDb(databaseUrl, { poolMax: 5, applicationName: 'window-counters-test' });
    dbs.push(db);
    return new PostgresWindowCounters(db);
  };
  const redisClient = async (url = TEST_REDIS_URL, opts: { commandTimeoutMs?: number; reachable?: boolean } = {}) => {
    const client = connectRedisCounters(url, { keyPrefix: prefix, commandTimeoutMs: opts.commandTimeoutMs });
    clients.push(client);
    if (opts.reachable ?? true) expect(await client.connected(3000)).to.equal(true);
    return client;
  };
  const stores: Store[] = [
    { name: 'postgres', open: async () => postgresCounters() },
    { name: 'redis', open: async () => new RedisWindowCounters(await redisClient(), postgresCounters()) },
  ];

  for (const store of stores) {
    describe(`in ${store.name}`, () => {
      it('keeps one exact count for two app instances hitting at once', async () => {
        const [a, b] = [await store.open(), await store.open()];
        expect(a.store).to.equal(store.name);
        const name = bucket();
        const now = Date.now();
        const hits = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).hit(name, MINUTE, 25, now)));
        expect(hits.map((h) => h.count).sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
        expect(hits.filter((h) => h.allowed)).to.have.length(25);
        for (const h of hits) expect(h.remaining).to.equal(Math.max(0, 25 - h.count));
      });

      it('starts over when the window ends, and says when that is', async () => {
        const [a, b] = [await store.open(), await store.open()];
        const name = bucket();
        const windowStart = Math.floor(Date.now() / MINUTE) * MINUTE;
        const first = await a.hit(name, MINUTE, 2, windowStart + 1_000);
        expect(first).to.include({ count: 1, allowed: true, remaining: 1, resetMs: 59_000 });
        expect((await b.hit(name, MINUTE, 2, windowStart + 30_000)).allowed).to.equal(true);
        const refused = await a.hit(name, MINUTE, 2, windowStart + 59_999);
        expect(refused).to.include({ count: 3, allowed: false, remaining: 0, resetMs: 1 });
        const next = await b.hit(name, MINUTE, 2, windowStart + MINUTE);
        expect(next).to.include({ count: 1, allowed: true, resetMs: MINUTE });
      });
    });
  }

  it('takes session settings for a pool of its own (the gateway\'s Postgres counters commit without waiting for the WAL flush)', async () => {
    const db = createDb(databaseUrl, { poolMax: 1, settings: { synchronous_commit: 'off' } });
    dbs.push(db);
    expect((await db.raw('show synchronous_commit')).rows[0].synchronous_commit).to.equal('off');
    expect((await dbs[0].raw('show synchronous_commit')).rows[0].synchronous_commit).to.equal('on');
  });

  describe('in Redis, when it fails', () => {
    it('counts under the configured prefix, each window\'s key expiring a window after it ends', async () => {
      const counters = new RedisWindowCounters(await redisClient(), postgresCounters());
      const name = bucket();
      const hit = await counters.hit(name, MINUTE, 10);
      const keys = await redisKeys(`${prefix}${name}:`);
      expect(keys).to.have.length(1);
      expect(keys[0].key).to.equal(`${prefix}${name}:${Math.floor(Date.now() / MINUTE) * MINUTE}`);
      expect(keys[0].value).to.equal('1');
      expect(keys[0].pttl).to.be.within(hit.resetMs + MINUTE - 2_000, hit.resetMs + MINUTE);
    });

    it('counts in Postgres, exactly, while Redis cannot be reached', async () => {
      const nowhere = `redis://127.0.0.1:${await freePort()}`;
      const [a, b] = [new RedisWindowCounters(await redisClient(nowhere, { reachable: false }), postgresCounters()), new RedisWindowCounters(await redisClient(nowhere, { reachable: false }), postgresCounters())];
      const name = bucket();
      const hits = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).hit(name, MINUTE, 7)));
      expect(hits.map((h) => h.count).sort((x, y) => x - y)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(hits.filter((h) => h.allowed)).to.have.length(7);
      const [row] = await dbs[0]('rate_limit_counters').where('bucket', name);
      expect(Number(row.count)).to.equal(10);
    });

    it('falls back to Postgres when Redis stops, and returns to Redis when it is back', async () => {
      const port = await freePort();
      let server = await startRedisServer(port);
      try {
        const client = await redisClient(`redis://127.0.0.1:${port}`);
        const counters = new RedisWindowCounters(client, postgresCounters(), { retryAfterMs: 200 });
        const name = bucket();
        expect((await counters.hit(name, MINUTE, 100)).count).to.equal(1);
        await stopRedisServer(server);
        // Whether the loss is seen first by the failed command or by the closed socket: no error, Postgres counts.
        const during = [await counters.hit(name, MINUTE, 100), await counters.hit(name, MINUTE, 100)];
        expect(during.map((h) => h.count)).to.deep.equal([1, 2]);
        expect(Number((await dbs[0]('rate_limit_counters').where('bucket', name).first()).count)).to.equal(2);
        server = await startRedisServer(port);
        expect(await client.connected(10_000)).to.equal(true);
        await new Promise((r) => setTimeout(r, 250));
        // A Redis without persistence restarted empty: its count starts over.
        expect((await counters.hit(name, MINUTE, 100)).count).to.equal(1);
      } finally {
        await stopRedisServer(server);
      }
    });

    it('does not wait on a Redis that stops answering: one timeout, then Postgres for a while', async () => {
      const port = await freePort();
      const server = await startRedisServer(port);
      try {
        const counters = new RedisWindowCounters(await redisClient(`redis://127.0.0.1:${port}`, { commandTimeoutMs: 300 }), postgresCounters(), { retryAfterMs: 60_000 });
        const name = bucket();
        expect((await counters.hit(name, MINUTE, 5)).count).to.equal(1);
        process.kill(server.pid!, 'SIGSTOP');
        let t = Date.now();
        // Redis takes the command but does not answer: counted in Postgres once the command times out.
        expect((await counters.hit(name, MINUTE, 5)).count).to.equal(1);
        expect(Date.now() - t).to.be.within(250, 2_000);
        t = Date.now();
        expect((await counters.hit(name, MINUTE, 5)).count).to.equal(2);
        expect(Date.now() - t).to.be.below(250);
      } finally {
        if (server.exitCode === null) process.kill(server.pid!, 'SIGCONT');
        await stopRedisServer(server);
      }
    });
  });
});

async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.end(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (open) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not listen on ${port}`);
}

async function stopRedisServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}
