/**
 * The gateway in its production shape: the Temporal server built from its Go module on PostgreSQL (16 history
 * shards, mutual TLS on its frontend), two API processes and two worker processes. Limits, idempotency, streams,
 * video jobs and scheduled work hold across processes; then one API and one worker are killed under load, the
 * Temporal server is killed and restarted, and Postgres is cut for the cluster's databases, and the books reconcile.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { Connection } from '@temporalio/client';
import { loadConfig } from '../../config/env';
import { temporalConnectionOptions } from '../../infra/temporal';
import { ensureGoTool, TEMPORAL_SERVER, TEMPORAL_SQL_TOOL } from '../../stack/go-tools';
import { dropDatabase } from '../../stack/postgres';
import { TemporalCluster } from '../../stack/temporal-cluster';
import { readAcceptedSubmissions } from '../../simulator';
import { MONTHLY_GRANT_SCHEDULE_ID } from '../../worker/grant-schedule';
import { HOLD_SWEEPER_SCHEDULE_ID, requestWorkflowId } from '../../workflows/contracts';
import { reserve } from '../../domain/ledger';
import { waitFor } from '../support/notification-sinks';
import { expectPlayableMp4, waitForJob } from '../support/video-jobs';
import { BALANCED, reconcile } from '../faults/support/reconcile';
import { ClusterFixture, IP_LIMIT, type ClusterTenant } from './support/cluster-fixture';

const json = { 'content-type': 'application/json' };
const chat = (content: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'sim-chat', max_tokens: 32, messages: [{ role: 'user', content }], ...extra });
const slow = (ms: number) => ({ ...json, 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': String(ms) });

interface Answer {
  api: number;
  status: number | 'connection lost';
  requestId: string | null;
  code?: string;
}

async function ask(t: ClusterTenant, api: number, path: string, init: RequestInit & { ip?: string } = {}): Promise<Answer> {
  try {
    const res = await t.fetch(api, path, init);
    const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
    return { api, status: res.status, requestId: res.headers.get('x-request-id'), code: body?.error?.code };
  } catch {
    return { api, status: 'connection lost', requestId: null };
  }
}

/** Polls until `probe` gives a value; a probe failing (a store briefly away) counts as not yet. */
const until = <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 120_000) =>
  waitFor(what, () => probe().catch(() => null), timeoutMs);

/** Waits out the last seconds of a fixed window of `windowMs`, so a few requests all land in one window. */
async function awayFromWindowEnd(windowMs: number, marginMs = 15_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 100));
}

describe('cluster: the Temporal server on Postgres, two APIs and two workers', function () {
  this.timeout(300_000);
  let fx: ClusterFixture;
  const tenants: string[] = [];

  before(async function () {
    this.timeout(300_000);
    fx = await ClusterFixture.start();
  });
  after(async function () {
    this.timeout(120_000);
    await fx?.stop();
  });

  async function tenant(opts: Parameters<ClusterFixture['newTenant']>[0] = {}): Promise<ClusterTenant> {
    const t = await fx.newTenant(opts);
    tenants.push(t.workspaceId);
    return t;
  }
  /** What GET /v1/requests/{id} on API `api` says once the request is no longer running. */
  const outcome = (t: ClusterTenant, api: number, id: string) => until(`the outcome of ${id}`, async () => {
    const res = await t.fetch(api, `/v1/requests/${id}`);
    if (res.status !== 200) return null;
    const body = (await res.json()) as { status: string; credits_used: number };
    return body.status === 'running' ? null : body;
  });
  async function expectBalanced(workspaceIds: string[]): Promise<void> {
    await until('every hold to end', async () => (await reconcile(fx.db, workspaceIds)).heldReservations.length === 0);
    expect(await reconcile(fx.db, workspaceIds)).to.deep.equal(BALANCED);
  }
  /** A request refused because a store was away: GET /v1/requests/{id} does not know it, and it holds nothing. */
  async function expectNothingStarted(t: ClusterTenant, a: Answer): Promise<void> {
    expect(a.code, JSON.stringify(a)).to.match(/_unavailable$/);
    expect(a.requestId).to.match(/^[0-9a-f-]{36}$/);
    expect((await t.fetch(a.api, `/v1/requests/${a.requestId}`)).status).to.equal(404);
    expect((await fx.db('reservations').where({ request_id: a.requestId })).filter((r) => r.status !== 'released')).to.deep.equal([]);
  }
  const heldCount = async (workspaceId: string) => Number((await fx.db('reservations').where({ workspace_id: workspaceId, status: 'held' }).count<{ n: string }[]>('* as n'))[0].n);

  it('runs Temporal on its own Postgres databases with 16 history shards, its frontend only for clients holding the cluster CA\'s certificate', async () => {
    // The gateway's database has no Temporal tables: they are in databases of their own.
    expect((await fx.db.raw(`select to_regclass('public.shards') as t`)).rows[0].t).to.equal(null);
    const { persistence } = fx.cluster.temporal.databases;
    const temporalDb = knexFactory({ client: 'pg', connection: `postgres://postgres@127.0.0.1:5432/${persistence}`, pool: { min: 0, max: 1 } });
    try {
      expect((await temporalDb.raw('select count(*)::int as n from shards')).rows[0].n).to.equal(16);
    } finally {
      await temporalDb.destroy();
    }
    const info = await fx.temporal.connection.workflowService.getSystemInfo({});
    expect(info.serverVersion).to.match(/^1\.32\./);
    const attributes = await fx.temporal.connection.operatorService.listSearchAttributes({ namespace: fx.cluster.temporal.namespace });
    expect(Object.keys(attributes.customAttributes ?? {})).to.include.members(['GatewayRequestId', 'GatewayWorkspaceId', 'GatewayApiKeyId', 'GatewayModel', 'GatewayEndpoint']);

    // Without TLS, or with TLS but no client certificate, the frontend does not serve.
    const { caPath, serverName } = fx.cluster.temporal.clientTls()!;
    const refused = async (options: Parameters<typeof Connection.connect>[0]) => {
      const connection = await Connection.connect({ ...options, connectTimeout: '3 seconds' }).catch(() => null);
      if (!connection) return true;
      try {
        return await connection.workflowService.getSystemInfo({}).then(() => false, () => true);
      } finally {
        await connection.close();
      }
    };
    expect(await refused({ address: fx.cluster.temporal.address })).to.equal(true);
    expect(await refused({ address: fx.cluster.temporal.address, tls: { serverNameOverride: serverName, serverRootCACertificate: fs.readFileSync(caPath!) } })).to.equal(true);
  });

  it('shares one requests-per-minute window across both APIs', async () => {
    const t = await tenant({ quotas: { rpm: 4 } });
    await awayFromWindowEnd(60_000, 25_000);
    const answers: Answer[] = [];
    for (let i = 0; i < 6; i++) answers.push(await ask(t, i % 2, '/v1/chat/completions', { method: 'POST', headers: json, body: chat(`rpm ${i}`) }));
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200, 429, 429]);
    expect(answers.slice(4).map((a) => [a.api, a.code])).to.deep.equal([[0, 'rate_limit_exceeded'], [1, 'rate_limit_exceeded']]);
  });

  it('shares one daily token count across both APIs', async () => {
    const t = await tenant({ quotas: { dailyTokens: 5 } });
    expect((await ask(t, 0, '/v1/chat/completions', { method: 'POST', headers: json, body: chat('spend the day') })).status).to.equal(200);
    const capped = await t.fetch(1, '/v1/chat/completions', { method: 'POST', headers: json, body: chat('and more') });
    expect(capped.status).to.equal(429);
    expect(((await capped.json()) as { error: { message: string } }).error.message).to.equal('Daily token cap reached');
  });

  it('shares one per-IP safety net across both APIs', async () => {
    const t = await tenant();
    await awayFromWindowEnd(600_000);
    const ip = `203.0.113.${(process.pid % 250) + 1}`;
    const statuses: number[] = [];
    for (let i = 0; i <= IP_LIMIT; i++) statuses.push((await t.fetch(i % 2, '/v1/models', { ip })).status);
    expect(statuses).to.deep.equal([...Array(IP_LIMIT).fill(200), 429]);
    expect((await t.fetch(IP_LIMIT % 2 === 0 ? 1 : 0, '/v1/models', { ip })).status).to.equal(429);
  });

  it('returns the first result when an Idempotency-Key is retried on the other API', async () => {
    const t = await tenant();
    const init = { method: 'POST', headers: { ...json, 'idempotency-key': 'cluster-retry' }, body: chat('once only') };
    const first = await t.fetch(0, '/v1/chat/completions', init);
    expect(first.status).to.equal(200);
    const firstBody = (await first.json()) as { id: string; choices: unknown };
    const retried = await t.fetch(1, '/v1/chat/completions', init);
    expect(retried.status).to.equal(200);
    expect(retried.headers.get('x-idempotent-replayed')).to.equal('true');
    const retriedBody = (await retried.json()) as { id: string; choices: unknown };
    expect([retriedBody.id, retriedBody.choices]).to.deep.equal([firstBody.id, firstBody.choices]);
    expect(await fx.db('reservations').where({ workspace_id: t.workspaceId, status: 'settled' })).to.have.length(1);
  });

  it('finds a stream served by one API with GET /v1/requests/{id} on the other', async () => {
    const t = await tenant();
    const res = await t.fetch(0, '/v1/chat/completions', { method: 'POST', headers: json, body: chat('a streamed answer', { stream: true, stream_options: { include_usage: true } }) });
    expect(res.status).to.equal(200);
    const id = res.headers.get('x-request-id')!;
    const text = await res.text();
    expect(text).to.include('data: [DONE]');
    const usage = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((c) => c.usage).usage as { credits_used: number };
    const seen = await outcome(t, 1, id);
    expect(seen).to.include({ status: 'succeeded', credits_used: usage.credits_used });
  });

  it('polls a video job started on one API from the other, to a playable MP4 charged once', async () => {
    const t = await tenant();
    const created = await t.fetch(0, '/v1/videos/generations', { method: 'POST', headers: json, body: JSON.stringify({ model: 'sim-video', prompt: 'across the cluster', duration: 2, resolution: '360p' }) });
    expect(created.status).to.equal(200);
    const { id } = (await created.json()) as { id: string };
    const { job } = await waitForJob((p) => t.fetch(1, p), id, { timeoutMs: 120_000 });
    expect(job.status, JSON.stringify(job.error)).to.equal('succeeded');
    await expectPlayableMp4(job.url!);
    expect(readAcceptedSubmissions(fx.simulatorDir).filter((s) => s.key.startsWith(`${id}:`))).to.have.length(1);
    expect(await fx.db('reservations').where({ request_id: id, status: 'settled' })).to.have.length(1);
  });

  it('runs the monthly grant and the hold sweeper once per cluster, whichever worker takes them', async () => {
    const ids: string[] = [];
    for await (const schedule of fx.temporal.schedule.list()) ids.push(schedule.scheduleId);
    expect(ids.sort()).to.deep.equal([HOLD_SWEEPER_SCHEDULE_ID, MONTHLY_GRANT_SCHEDULE_ID].sort());

    // One trigger of the grant: one run, whichever of the two workers polling its queue takes it.
    const grantRuns = async () => {
      const runs = [];
      for await (const run of fx.temporal.workflow.list({ query: `WorkflowType = 'monthlyCreditGrantsWorkflow'` })) runs.push(run);
      return runs;
    };
    const before = (await grantRuns()).length;
    await fx.temporal.schedule.getHandle(MONTHLY_GRANT_SCHEDULE_ID).trigger();
    const runs = await until('the triggered grant run to complete', async () => {
      const all = await grantRuns();
      return all.length > before && all.every((r) => r.status.name !== 'RUNNING') ? all : null;
    });
    expect(runs).to.have.length(before + 1);
    expect(runs.map((r) => r.status.name)).to.deep.equal(Array(runs.length).fill('COMPLETED'));

    // A hold whose run never began (its process died between the hold and the start): the sweeps of the two
    // workers' schedule release it once, with one audit line. (A run an operator stops gives its hold back itself.)
    const t = await tenant();
    const reservationId = `${requestWorkflowId(randomUUID())}:0`;
    await reserve(fx.db, { reservationId, workspaceId: t.workspaceId, amountMicro: 1_000, requestId: reservationId.slice(4, -2) });
    await expectBalanced([t.workspaceId]);
    const audits = await fx.db('audit_log').where({ workspace_id: t.workspaceId, actor: 'system:hold-sweeper', action: 'reservation.release' });
    expect(audits.map((a) => a.subject_id)).to.deep.equal([reservationId]);
  });

  it('keeps serving on the other pair when one API and one worker are killed (kill -9) under load, each request charged once', async () => {
    const t = await tenant();
    const load = Array.from({ length: 16 }, (_, i) => ({ api: i % 2, trace: `cluster-kill-${t.workspaceId}-${i}` }));
    const inFlight = load.map((l) => ask(t, l.api, '/v1/chat/completions', { method: 'POST', headers: { ...slow(4000), 'x-request-id': l.trace }, body: chat(`load ${l.trace}`) }));
    await until('16 holds', async () => (await heldCount(t.workspaceId)) >= 16, 60_000);
    await Promise.all([fx.cluster.kill('api', 0), fx.cluster.kill('worker', 0)]);
    // While they are down, the other API takes new requests and the other worker runs them.
    const during = await Promise.all(Array.from({ length: 4 }, (_, i) => ask(t, 1, '/v1/chat/completions', { method: 'POST', headers: json, body: chat(`during ${i}`) })));
    const answers = await Promise.all(inFlight);
    expect(during.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
    expect(answers.filter((a) => a.api === 1).map((a) => a.status)).to.deep.equal(Array(8).fill(200));
    // The killed API's clients lost their connections (unless an answer beat the kill).
    expect(answers.filter((a) => a.api === 0 && a.status !== 200).map((a) => a.status)).to.deep.equal(answers.filter((a) => a.api === 0 && a.status !== 200).map(() => 'connection lost'));
    expect(answers.filter((a) => a.status === 'connection lost')).to.have.length.greaterThan(0);
    // The runs of the killed API's requests went on without it: found on the other API, succeeded.
    for (const l of load.filter((x) => x.api === 0)) expect((await outcome(t, 1, l.trace)).status).to.equal('succeeded');
    await Promise.all([fx.cluster.start('api', 0), fx.cluster.start('worker', 0)]);
    expect((await ask(t, 0, '/v1/chat/completions', { method: 'POST', headers: json, body: chat('back') })).status).to.equal(200);
    expect(await fx.db('reservations').where({ workspace_id: t.workspaceId, status: 'settled' })).to.have.length(21);
    await expectBalanced([t.workspaceId]);
  });

  it('survives a restart of the Temporal server under load: every client gets its answer or a known outcome, charged once', async () => {
    const t = await tenant();
    const inFlight = Array.from({ length: 10 }, (_, i) => ask(t, i % 2, '/v1/chat/completions', { method: 'POST', headers: slow(3000), body: chat(`temporal restart ${i}`) }));
    await until('10 holds', async () => (await heldCount(t.workspaceId)) >= 10, 60_000);
    await fx.cluster.temporal.killServer();
    // Asked while the server is down: an answer once it is back, or 503 with nothing started and nothing held.
    const during = [0, 1].map((api) => ask(t, api, '/v1/chat/completions', { method: 'POST', headers: json, body: chat(`while Temporal is down ${api}`) }));
    await new Promise((r) => setTimeout(r, 3_000));
    await fx.cluster.temporal.startServer();
    const answers = await Promise.all(inFlight);
    for (const a of [...answers, ...await Promise.all(during)]) {
      if (a.status === 200) continue;
      if (a.status === 503) {
        await expectNothingStarted(t, a);
        continue;
      }
      expect(a, JSON.stringify(a)).to.include({ status: 504, code: 'outcome_unknown' });
      expect((await outcome(t, a.api, a.requestId!)).status).to.be.oneOf(['succeeded', 'failed']);
    }
    // Both APIs serve again once the server is back.
    for (const api of [0, 1]) {
      const after = await until(`API ${api + 1} to serve after the restart`, async () => {
        const a = await ask(t, api, '/v1/chat/completions', { method: 'POST', headers: json, body: chat(`after restart ${api}`) });
        return a.status === 200 ? a : null;
      });
      expect(after.status).to.equal(200);
    }
    await expectBalanced([t.workspaceId]);
  });

  it('rides out Postgres refusing the cluster\'s databases for 10 s: in-flight requests settle once, new ones get 503 + Retry-After', async () => {
    const t = await tenant();
    const inFlight = Array.from({ length: 10 }, (_, i) => ask(t, i % 2, '/v1/chat/completions', { method: 'POST', headers: slow(2500), body: chat(`postgres cut ${i}`) }));
    await until('10 holds', async () => (await heldCount(t.workspaceId)) >= 10, 60_000);
    await fx.cutPostgres();
    const cutAt = Date.now();
    let during: Response | null = null;
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      during = await t.fetch(1, '/v1/chat/completions', { method: 'POST', headers: json, body: chat('during the cut') });
      await new Promise((r) => setTimeout(r, Math.max(0, 10_000 - (Date.now() - cutAt))));
    } finally {
      await fx.restorePostgres();
    }
    expect(during!.status).to.equal(503);
    expect(during!.headers.get('retry-after')).to.match(/^\d+$/);
    const duringCode = ((await during!.json()) as { error: { code: string } }).error.code;
    expect(duringCode).to.be.oneOf(['database_unavailable', 'temporal_unavailable']);
    await expectNothingStarted(t, { api: 1, status: 503, code: duringCode, requestId: during!.headers.get('x-request-id') });
    const answers = await Promise.all(inFlight);
    for (const a of answers) {
      if (a.status === 200) continue;
      expect(a.status, JSON.stringify(a)).to.be.oneOf([503, 504]);
      expect((await outcome(t, a.api, a.requestId!)).status).to.be.oneOf(['succeeded', 'failed']);
    }
    for (const api of [0, 1]) {
      await until(`API ${api + 1} to serve after the cut`, async () => (await ask(t, api, '/v1/chat/completions', { method: 'POST', headers: json, body: chat(`after the cut ${api}`) })).status === 200);
    }
    await expectBalanced([t.workspaceId]);
  });

  it('leaves the books of every workspace balanced', async () => {
    await expectBalanced(tenants);
  });
});

describe('cluster: the Temporal frontend with server-authenticated TLS', function () {
  this.timeout(180_000);
  const admin = 'postgres://postgres@127.0.0.1:5432/postgres';
  const prefix = `temporal_tls_${process.pid}_${Date.now().toString(36)}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-cluster-tls-'));
  let cluster: TemporalCluster | null = null;
  after(async function () {
    this.timeout(60_000);
    await cluster?.stop();
    for (const name of [prefix, `${prefix}_visibility`]) await dropDatabase(admin, name).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves a gateway configured with TEMPORAL_TLS, TEMPORAL_TLS_CA_PATH and TEMPORAL_TLS_SERVER_NAME, and no client without TLS', async () => {
    const { cacheDir } = loadConfig();
    cluster = await TemporalCluster.start({
      binaries: { server: ensureGoTool(TEMPORAL_SERVER, cacheDir), sqlTool: ensureGoTool(TEMPORAL_SQL_TOOL, cacheDir) },
      postgresUrl: admin, databasePrefix: prefix, dir, port: 0, tls: 'tls', historyShards: 4,
    });
    const env = cluster.clientEnv();
    expect(Object.keys(env).sort()).to.deep.equal(['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_TLS', 'TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_SERVER_NAME']);
    // The options the gateway's own connections are built with, from that environment.
    const config = loadConfig(env);
    const connection = await Connection.connect({ address: config.temporalAddress!, ...temporalConnectionOptions(config.temporalTls) });
    try {
      expect((await connection.workflowService.getSystemInfo({})).serverVersion).to.match(/^1\.32\./);
    } finally {
      await connection.close();
    }
    const plain = await Connection.connect({ address: config.temporalAddress!, connectTimeout: '3 seconds' }).catch(() => null);
    const answered = plain ? await plain.workflowService.getSystemInfo({}).then(() => true, () => false) : false;
    await plain?.close();
    expect(answered).to.equal(false);
  });
});
