import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../../core/paths';
import { getSharedStack } from '../../support/stack';
import { startTestGateway, type TestGateway } from '../../support/gateway';
import { deleteRedisKeys, redisCountersEnv, redisKeys } from '../../support/redis';
import { createApiKey } from '../../../domain/workspaces';

const chatBody = JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] });
const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody };

// Every window counter in Postgres (the default), then in Redis (REDIS_URL): the same limits either way.
const COUNTER_STORES: Array<{ name: string; env: () => Record<string, string> }> = [
  { name: 'Postgres', env: () => ({ REDIS_URL: '' }) },
  { name: 'Redis', env: redisCountersEnv },
];

for (const store of COUNTER_STORES) {
  describe(`per-key quotas (window counters in ${store.name})`, function () {
    this.timeout(180_000);
    let gateway: TestGateway;
    const env = store.env();
    before(async function () {
      this.timeout(180_000);
      gateway = await startTestGateway({ env });
    });
    after(async () => {
      await gateway?.stop();
      if (env.REDIS_KEY_PREFIX) await deleteRedisKeys(env.REDIS_KEY_PREFIX);
    });

    it('limits requests per minute with Retry-After and x-ratelimit headers', async () => {
      const tenant = await gateway.newTenant({ quotas: { rpm: 3 } });
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await tenant.fetch('/v1/chat/completions', post));
      expect(results.slice(0, 3).map((r) => r.status)).to.deep.equal([200, 200, 200]);
      expect(results[0].headers.get('x-ratelimit-limit-requests')).to.equal('3');
      expect(results[2].headers.get('x-ratelimit-remaining-requests')).to.equal('0');
      const limited = results[3];
      expect(limited.status).to.equal(429);
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 60);
      expect(limited.headers.get('x-ratelimit-reset-requests')).to.match(/^\d+s$/);
      const body = (await limited.json()) as any;
      expect(body.error).to.include({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    });

    it('counts a request against its key\'s window only when it reaches the quotas (a model endpoint the key may use)', async () => {
      const tenant = await gateway.newTenant({ quotas: { rpm: 2 } });
      for (let i = 0; i < 3; i++) {
        const models = await tenant.fetch('/v1/models');
        expect(models.status).to.equal(200);
        expect(models.headers.get('x-ratelimit-limit-requests')).to.equal(null);
      }
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await tenant.fetch('/v1/chat/completions', post)).status);
      expect(statuses).to.deep.equal([200, 200, 429]);

      // A role that may not use models is refused before its request counts; so is an admin key.
      const viewer = await gateway.newTenant({ quotas: { rpm: 1 }, role: 'viewer' });
      for (let i = 0; i < 2; i++) {
        const refused = await viewer.fetch('/v1/chat/completions', post);
        expect(refused.status).to.equal(403);
        expect(((await refused.json()) as any).error.code).to.equal('role_cannot_use_models');
      }
      const admin = await createApiKey(gateway.runtime.db, { workspaceId: tenant.workspaceId, name: 'automation', role: 'owner', kind: 'admin', quotas: { rpm: 1 }, actor: 'test' });
      const adminCall = await fetch(`${gateway.url}/v1/chat/completions`, { ...post, headers: { ...post.headers, authorization: `Bearer ${admin.key}` } });
      expect(adminCall.status).to.equal(403);
      if (store.name === 'Postgres') {
        const counted = await gateway.runtime.db('rate_limit_counters').whereIn('bucket', [`key:${viewer.keyId}:rpm`, `key:${admin.id}:rpm`, `key:${tenant.keyId}:rpm`]).select('bucket', 'count');
        expect(counted.map((r) => [r.bucket, Number(r.count)])).to.deep.equal([[`key:${tenant.keyId}:rpm`, 3]]);
      }
    });

    it('stops a key at its daily token cap until midnight UTC, telling clients not to retry', async () => {
      const tenant = await gateway.newTenant({ quotas: { dailyTokens: 5 } });
      expect((await tenant.fetch('/v1/chat/completions', post)).status).to.equal(200);
      const capped = await tenant.fetch('/v1/chat/completions', post);
      expect(capped.status).to.equal(429);
      expect(capped.headers.get('x-should-retry')).to.equal('false');
      const now = new Date();
      const toMidnight = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
      expect(Number(capped.headers.get('retry-after'))).to.be.closeTo(toMidnight, 60);
      const body = (await capped.json()) as any;
      expect(body.error.message).to.equal('Daily token cap reached');
      expect(body.error.code).to.equal('rate_limit_exceeded');
    });

    it('refuses models the key may not use (403 model_not_allowed)', async () => {
      const tenant = await gateway.newTenant({ quotas: { models: ['sim-chat-mini'] } });
      const res = await tenant.fetch('/v1/chat/completions', post);
      expect(res.status).to.equal(403);
      expect(((await res.json()) as any).error.code).to.equal('model_not_allowed');
      const allowed = await tenant.fetch('/v1/chat/completions', { ...post, body: chatBody.replace('"sim-chat"', '"sim-chat-mini"') });
      expect(allowed.status).to.equal(200);
    });

    it('stops a key at its cost cap (403 key_cost_cap_exceeded)', async () => {
      const tenant = await gateway.newTenant({ credits: 100, quotas: { costCap: 0.000001 } });
      const res = await tenant.fetch('/v1/chat/completions', post);
      expect(res.status).to.equal(403);
      expect(((await res.json()) as any).error.code).to.equal('key_cost_cap_exceeded');
    });

    it('says why a cost cap refused: a hold larger than what is left (nothing spent), then the cap used up', async () => {
      const tenant = await gateway.newTenant({ credits: 100, quotas: { costCap: 0.01 } });
      const refusal = async (body: string) => {
        const res = await tenant.fetch('/v1/chat/completions', { ...post, body });
        return { status: res.status, ...(((await res.json()) as any).error ?? {}) };
      };
      // Without max_tokens the hold covers the model's longest answer: more than the whole cap, though nothing was spent.
      const early = await refusal(chatBody);
      expect(early).to.include({ status: 403, code: 'key_cost_cap_exceeded' });
      expect(early.message).to.match(/^This request may cost up to [\d.]+ credits \(the hold taken before it runs\), more than the 0\.01 credits left under this API key's cost cap of 0\.01 credits \(0 credits spent\)\. Ask for less \(a lower max_tokens/);
      // Asking for less fits under the cap.
      const small = await tenant.fetch('/v1/chat/completions', { ...post, body: JSON.stringify({ ...JSON.parse(chatBody), max_tokens: 16 }) });
      expect(small.status).to.equal(200);
      // Spent up to the cap, the refusal says the cap is reached.
      await gateway.runtime.db('api_keys').where({ id: tenant.keyId }).update({ spent_micro: 10_000 });
      expect(await refusal(chatBody)).to.include({
        status: 403, code: 'key_cost_cap_exceeded',
        message: 'This API key reached its cost cap of 0.01 credits (0.01 credits spent). Raise the cap or use another key.',
      });
    });

    it('applies the per-IP safety net before authentication', async () => {
      // Behind a trusted proxy the client address comes from X-Forwarded-For; a fresh one has a fresh count.
      const strict = await startTestGateway({ env: { ...env, IP_RATE_LIMIT: '3', TRUST_PROXY: 'true' } });
      const address = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
      try {
        const statuses = [];
        for (let i = 0; i < 4; i++) {
          statuses.push((await fetch(`${strict.url}/v1/models`, { headers: { authorization: 'Bearer wrong', 'x-forwarded-for': address } })).status);
        }
        expect(statuses).to.deep.equal([401, 401, 401, 429]);
      } finally {
        await strict.stop();
      }
    });
  });

  describe(`per-key quotas across two API processes (window counters in ${store.name})`, function () {
    this.timeout(240_000);
    let gateway: TestGateway;
    const env = store.env();
    let second: ChildProcess | null = null;
    let secondUrl = '';

    before(async function () {
      this.timeout(180_000);
      const stack = await getSharedStack();
      const taskQueue = `two-process-${process.pid}`;
      gateway = await startTestGateway({ taskQueue, env });
      // A second, separate API process (no worker of its own) on the same database and task queue.
      second = spawn(process.execPath, [path.join(repoRoot, 'dist', 'main', 'api.js')], {
        cwd: repoRoot,
        env: {
          ...process.env, PORT: '0', DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue,
          S3_ENDPOINT: stack.s3.endpoint, S3_ACCESS_KEY_ID: stack.s3.accessKeyId, S3_SECRET_ACCESS_KEY: stack.s3.secretAccessKey, S3_BUCKET: stack.s3.bucket,
          LOG_LEVEL: 'error', ...env,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      secondUrl = await new Promise<string>((resolve, reject) => {
        let out = '';
        second!.stdout!.on('data', (chunk) => {
          out += chunk;
          const m = /listening on (http:\/\/\S+)\/v1/.exec(out);
          if (m) resolve(m[1]);
        });
        second!.once('exit', (code) => reject(new Error(`second API process exited with ${code}`)));
      });
    });
    after(async () => {
      if (second && second.exitCode === null) {
        const exited = new Promise((r) => second!.once('exit', r));
        second.kill('SIGTERM');
        await exited;
      }
      await gateway?.stop();
      if (env.REDIS_KEY_PREFIX) await deleteRedisKeys(env.REDIS_KEY_PREFIX);
    });

    it('shares one requests-per-minute budget between the processes', async () => {
      const tenant = await gateway.newTenant({ quotas: { rpm: 4 } });
      const call = (base: string) => fetch(`${base}/v1/chat/completions`, { ...post, headers: { ...post.headers, authorization: `Bearer ${tenant.key}` } });
      const statuses = [];
      for (const base of [gateway.url, secondUrl, gateway.url, secondUrl, gateway.url, secondUrl]) statuses.push((await call(base)).status);
      expect(statuses).to.deep.equal([200, 200, 200, 200, 429, 429]);
      if (env.REDIS_KEY_PREFIX) {
        // Counted in Redis (not in Postgres, where counts go only while Redis is unavailable).
        const keys = await redisKeys(`${env.REDIS_KEY_PREFIX}key:${tenant.keyId}:rpm:`);
        expect(keys.map((k) => k.value)).to.deep.equal(['6']);
      }
    });
  });
}
