/**
 * The fault suite: a gateway as separate processes (API, worker, Temporal dev server on a SQLite file,
 * MinIO, a fresh Postgres database), each part killed (SIGKILL) or stopped while requests and jobs are in
 * flight, then started again. After each fault the books are reconciled from the database alone, and every
 * client either got its answer or a 503/504 whose request id leads to the outcome.
 */
import { expect } from 'chai';
import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { join } from 'node:path';
import { requestSearchAttributes } from '../../api/requests/workflow-ids';
import { holdWorkflowId } from '../../domain/abandoned-holds';
import { readAcceptedSubmissions } from '../../simulator';
import type { ModelRequestInput } from '../../workflows/request-steps';
import { waitFor, WebhookSink } from '../support/notification-sinks';
import { expectPlayableMp4, postVideo, waitForJob, type VideoJobObject } from '../support/video-jobs';
import { loadCatalogFiles } from '../../catalog/load';
import { upsertOperatorModel } from '../../domain/model-catalog';
import { echoAnswer, FakeOpenAIBatches } from '../support/fake-openai-batches';
import { FakeUpstream } from '../support/fake-upstream';
import { echoedCharges, nativeBatchRecord } from '../support/native-batches';
import { FaultStack, type FaultTenant } from './support/fault-stack';
import { BALANCED, booksOf, ledgerChargeMicro, reconcile, type RequestBooks } from './support/reconcile';

const json = { 'content-type': 'application/json' };
/** A chat whose model takes `delayMs` to answer: long enough to break something while it is in flight. */
const slowChat = (delayMs: number) => ({ ...json, 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': String(delayMs) });
const chatBody = (content: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'sim-chat', max_tokens: 64, messages: [{ role: 'user', content }], ...extra });

interface ClientView {
  status: number | 'connection lost';
  requestId: string | null;
  code?: string;
  retryAfter?: string | null;
}

/** One request through the API process, or through the gateway process at base URL `at`. */
async function send(tenant: FaultTenant, path: string, init: RequestInit, at?: string): Promise<ClientView> {
  try {
    const res = await (at ? tenant.fetchAt(at, path, init) : tenant.fetch(path, init));
    const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
    return { status: res.status, requestId: res.headers.get('x-request-id'), code: body?.error?.code, retryAfter: res.headers.get('retry-after') };
  } catch {
    return { status: 'connection lost', requestId: null };
  }
}

/** What `GET /v1/requests/{id}` says once the request is no longer running. */
async function finalOutcome(tenant: FaultTenant, id: string): Promise<{ status: string; credits_used: number }> {
  return waitFor(`the outcome of ${id}`, async () => {
    const res = await tenant.fetch(`/v1/requests/${id}`).catch(() => null);
    if (res?.status !== 200) return null;
    const body = (await res.json()) as { status: string; credits_used: number };
    return body.status === 'running' ? null : body;
  }, 120_000);
}

/** `GET /v1/requests/{id}` as it answers now (status and body). */
async function lookUp(tenant: FaultTenant, id: string): Promise<{ status: number; body: { id?: string; status?: string; credits_used?: number | null; error?: { code?: string } | null } }> {
  const res = await tenant.fetch(`/v1/requests/${encodeURIComponent(id)}`);
  return { status: res.status, body: (await res.json()) as never };
}

/** What the client saw, what GET /v1/requests/{id} says and the ledger rows, printed with TEST_VERBOSE=1. */
function showOutcome(fault: string, rows: Array<{ client: unknown; lookup: unknown; books: RequestBooks }>): void {
  if (!process.env.TEST_VERBOSE) return;
  for (const row of rows) console.log(JSON.stringify({ fault, client: row.client, lookup: row.lookup, books: row.books }));
}

/**
 * Every client got its answer, or a 503/504 with a request id whose outcome GET /v1/requests/{id} gives: a
 * run that ended, or (for a store that was unavailable before anything started) no such request at all.
 */
async function expectEveryOutcomeKnown(tenant: FaultTenant, views: ClientView[], db: FaultStack['db']): Promise<void> {
  for (const view of views) {
    if (view.status === 200) continue;
    expect(view.status, JSON.stringify(view)).to.be.oneOf([503, 504]);
    expect(view.requestId, 'x-request-id').to.match(/^[0-9a-f-]{36}$/);
    expect(view.retryAfter, 'Retry-After').to.match(/^\d+$/);
    if (view.code?.endsWith('_unavailable')) {
      expect((await tenant.fetch(`/v1/requests/${view.requestId}`)).status).to.equal(404);
      expect(await db('reservations').where({ request_id: view.requestId })).to.deep.equal([]);
      continue;
    }
    const outcome = await finalOutcome(tenant, view.requestId!);
    expect(outcome.status).to.be.oneOf(['succeeded', 'failed', 'cancelled']);
  }
}

const tally = (views: ClientView[]) => views.reduce<Record<string, number>>((t, v) => {
  const key = `${v.status}${v.code ? ` ${v.code}` : ''}`;
  t[key] = (t[key] ?? 0) + 1;
  return t;
}, {});

describe('faults: a gateway of separate processes, broken one part at a time', function () {
  this.timeout(600_000);
  let stack: FaultStack;
  let temporal: Client;
  const tenants: string[] = [];
  const report: Array<Record<string, unknown>> = [];

  before(async function () {
    this.timeout(300_000);
    stack = await FaultStack.start();
    temporal = new Client({ connection: await Connection.connect({ address: stack.env().TEMPORAL_ADDRESS! }) });
  });
  after(async function () {
    this.timeout(120_000);
    if (process.env.TEST_VERBOSE) console.table(report);
    await temporal?.connection.close().catch(() => undefined);
    await stack?.stop();
  });

  async function tenant(opts: Parameters<FaultStack['newTenant']>[0] = {}): Promise<FaultTenant> {
    const t = await stack.newTenant({ quotas: { costCap: 80 }, ...opts });
    tenants.push(t.workspaceId);
    return t;
  }
  const reservationCount = async (workspaceId: string, status: 'held' | 'settled') =>
    Number((await stack.db('reservations').where({ workspace_id: workspaceId, status }).count<{ n: string }[]>('* as n'))[0].n);
  const waitForHolds = (t: FaultTenant, n: number) => waitFor(`${n} holds`, async () => (await reservationCount(t.workspaceId, 'held')) >= n, 60_000);
  const settledCount = (workspaceId: string) => reservationCount(workspaceId, 'settled');
  /**
   * n holds whose runs the server has. A first hop holds beside its run's start, so a hold alone does not
   * mean a run: a process killed between the two leaves a hold without one (the hold sweeper's to release).
   */
  const waitForHoldsWithRuns = (t: FaultTenant, n: number) => waitFor(`${n} holds whose runs started`, async () => {
    const holds = await stack.db('reservations').where({ workspace_id: t.workspaceId, status: 'held' }).select('id');
    if (holds.length < n) return false;
    const started = await Promise.all(holds.map((h: { id: string }) => temporal.workflow.getHandle(holdWorkflowId(h.id)).describe().then(() => true, () => false)));
    return started.filter(Boolean).length >= n;
  }, 60_000);
  /** 20 chats whose model answers after `delayMs`, once all of them hold their credits (in flight). */
  async function twentySlowChats(t: FaultTenant, delayMs: number, label: string): Promise<Array<Promise<ClientView>>> {
    const inFlight = Array.from({ length: 20 }, (_, i) => send(t, '/v1/chat/completions', { method: 'POST', headers: slowChat(delayMs), body: chatBody(`${label} ${i}`) }));
    await waitForHolds(t, 20);
    return inFlight;
  }
  /** The books balance (after at most a few sweeper periods for holds of closed runs). */
  async function expectBooksBalanced(workspaceIds: string[]): Promise<void> {
    await waitFor('every hold to end', async () => (await reconcile(stack.db, workspaceIds)).heldReservations.length === 0, 60_000);
    expect(await reconcile(stack.db, workspaceIds)).to.deep.equal(BALANCED);
  }

  it('Postgres refusing connections for 20 s while 20 requests settle: every request settles once, new ones get 503 + Retry-After', async () => {
    const t = await tenant();
    const inFlight = await twentySlowChats(t, 2500, 'settle');
    await stack.blockPostgres();
    const blockedAt = Date.now();
    await new Promise((r) => setTimeout(r, 5_000));
    const during = await send(t, '/v1/chat/completions', { method: 'POST', headers: json, body: chatBody('during the outage') });
    await new Promise((r) => setTimeout(r, 15_000));
    await stack.allowPostgres();
    const allowedAt = Date.now();
    const views = await Promise.all(inFlight);
    report.push({ fault: 'postgres refusing connections 20 s', clients: tally(views), during: tally([during]), recoveredMs: Date.now() - allowedAt, outageMs: allowedAt - blockedAt });

    expect(during).to.include({ status: 503, code: 'database_unavailable' });
    expect(during.retryAfter).to.match(/^\d+$/);
    expect(views.map((v) => v.status)).to.deep.equal(Array(20).fill(200));
    await expectEveryOutcomeKnown(t, [during], stack.db);
    expect(await settledCount(t.workspaceId)).to.equal(20);
    await expectBooksBalanced([t.workspaceId]);
  });

  it('a run terminated by an operator, and a run hitting its execution timeout: the API answering the first gives its hold back, the sweeper the other\'s, each audited', async () => {
    const t = await tenant();
    const pending = send(t, '/v1/chat/completions', { method: 'POST', headers: slowChat(30_000), body: chatBody('terminated') });
    await waitForHolds(t, 1);
    const held = await stack.db('reservations').where({ workspace_id: t.workspaceId, status: 'held' }).first();
    const terminatedId = held.id.slice(0, held.id.lastIndexOf(':'));
    await temporal.workflow.getHandle(terminatedId).terminate('operator');
    const view = await pending;
    expect(view).to.include({ status: 503, code: 'request_stopped' });

    // A run started with a 3 s execution timeout whose model takes 30 s.
    const requestId = randomUUID();
    const input: ModelRequestInput = {
      requestId, workspaceId: t.workspaceId, apiKeyId: t.keyId, endpoint: 'chat.completions', chain: ['sim-chat'], allowedModels: null,
      body: { inline: JSON.parse(chatBody('times out')) }, created: Math.floor(Date.now() / 1000), simulate: { failure: 'slow', delayMs: 30_000 },
    };
    await temporal.workflow.start('modelRequestWorkflow', {
      taskQueue: 'faults', workflowId: `req-${requestId}`, args: [input], workflowExecutionTimeout: '3 seconds',
      typedSearchAttributes: requestSearchAttributes({ requestId, workspaceId: t.workspaceId, apiKeyId: t.keyId, model: 'sim-chat', endpoint: 'chat.completions' }),
    });
    const closedAt = Date.now();
    // Its hold is taken before the books are looked at (the terminated run's is already given back).
    await waitFor('the timed-out run to hold', () => stack.db('reservations').where({ id: `req-${requestId}:0` }).first(), 30_000);
    await expectBooksBalanced([t.workspaceId]);
    // The API, answering request_stopped, gave the terminated run's hold back; the sweeper the timed-out one's.
    const audits = await stack.db('audit_log').where({ workspace_id: t.workspaceId, action: 'reservation.release' }).orderBy('id');
    expect(audits.map((a) => [a.actor, a.subject_id])).to.deep.equal([['system:request-stopped', held.id], ['system:hold-sweeper', `req-${requestId}:0`]]);
    expect(audits[1].data.workflowStatus).to.equal('TIMED_OUT');
    expect((await finalOutcome(t, requestId)).status).to.equal('failed');
    await expectEveryOutcomeKnown(t, [view], stack.db);
    report.push({ fault: 'operator terminate + execution timeout', clients: tally([view]), releasedWithinMs: Date.now() - closedAt });
  });

  it('runs terminated while their model is called (worker apart, and API+worker in one process): the call stops, the client is told 503 request_stopped, GET and the ledger agree: nothing charged', async () => {
    const t = await tenant();
    // A second between a stream's parts: its run is terminated while it streams.
    await stack.startApiWorker({ SIMULATED_STREAM_DELAY_MS: '1000' });
    try {
      await terminatedMidCall(t);
    } finally {
      await stack.stopApiWorker();
    }
    await expectBooksBalanced([t.workspaceId]);
  });

  async function terminatedMidCall(t: FaultTenant): Promise<void> {
    const modelMs = 12_000;
    const sentAt = Date.now();
    const pending = [
      send(t, '/v1/chat/completions', { method: 'POST', headers: slowChat(modelMs), body: chatBody('terminated, worker apart') }),
      send(t, '/v1/chat/completions', { method: 'POST', headers: slowChat(modelMs), body: chatBody('terminated, api+worker') }, stack.apiWorkerUrl),
    ];
    await waitForHoldsWithRuns(t, 2);
    const held = await stack.db('reservations').where({ workspace_id: t.workspaceId, status: 'held' }).select('id');
    for (const h of held) await temporal.workflow.getHandle(holdWorkflowId(h.id)).terminate('operator');
    const views = await Promise.all(pending);
    for (const view of views) expect(view, JSON.stringify(view)).to.include({ status: 503, code: 'request_stopped' });

    // Past the moment the model would have answered (and settled, before): still nothing charged.
    await new Promise((r) => setTimeout(r, Math.max(0, sentAt + modelMs + 4_000 - Date.now())));
    const rows = [];
    for (const view of views) {
      const lookup = await lookUp(t, view.requestId!);
      const books = await booksOf(stack.db, view.requestId!);
      rows.push({ client: view, lookup: lookup.body, books });
      expect(lookup.status).to.equal(200);
      expect(lookup.body).to.deep.include({ status: 'failed', credits_used: 0 });
      expect(lookup.body.error?.code).to.equal('request_stopped');
      expect(books.reservations.map((r) => r.status)).to.deep.equal(['released']);
      expect(books.ledger.map((l) => l.kind).sort()).to.deep.equal(['refund', 'reserve']);
      expect(books.usage).to.equal(null);
    }
    // The calls were stopped upstream (in whichever process ran each hop), not left to finish.
    const logs = ['worker.log', 'api-worker.log'].map((f) => fs.readFileSync(join(stack.dir, 'logs', f), 'utf8')).join('\n').split('\n');
    for (const view of views) expect(logs.some((l) => l.includes('a hop stops its model call') && l.includes(`req-${view.requestId}`)), `the call of ${view.requestId} stopped`).to.equal(true);
    showOutcome('terminated mid-call', rows);
    const streamed = await terminatedMidStream(t);
    report.push({ fault: 'terminated mid-call', clients: tally(views), charged: rows.map((r) => ledgerChargeMicro(r.books)).join(','), stream: streamed });
  }

  /** A stream (a local activity of the API+worker process) whose run is terminated after its first parts. */
  async function terminatedMidStream(t: FaultTenant): Promise<string> {
    const res = await t.fetchAt(stack.apiWorkerUrl, '/v1/chat/completions', {
      method: 'POST', headers: json, body: chatBody('a stream whose run is terminated in the middle of its answer, which is a longer one', { stream: true, stream_options: { include_usage: true }, max_tokens: 400 }),
    });
    const id = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    let text = '';
    const parts = () => text.split('\n').filter((l) => l.startsWith('data: {') && !l.includes('"error"')).length;
    while (parts() < 3) text += Buffer.from((await reader.read()).value!).toString();
    await temporal.workflow.getHandle(`req-${id}`).terminate('operator');
    const terminatedAt = Date.now();
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      text += Buffer.from(value!).toString();
    }
    const endedAfterMs = Date.now() - terminatedAt;
    const outcome = await finalOutcome(t, id);
    const books = await booksOf(stack.db, id);
    const error = text.split('\n').filter((l) => l.startsWith('data: {') && l.includes('"error"')).map((l) => JSON.parse(l.slice(6)).error)[0];
    showOutcome('stream terminated mid-stream', [{ client: { status: res.status, parts: parts(), done: text.includes('[DONE]'), error, endedAfterMs }, lookup: outcome, books }]);
    // Stopped mid-answer (told why in an error event) and billed what was generated, unless the hold sweeper (every
    // 3 s here, no minimum age) closed its hold first: either way the answer, GET and the ledger agree.
    expect(error?.code).to.equal('request_stopped');
    expect(text).to.not.include('"finish_reason":"stop"');
    expect(outcome.status).to.equal('failed');
    if (books.usage) expect(books.usage.status).to.equal('cancelled');
    expect(Math.round(outcome.credits_used * 1_000_000)).to.equal(ledgerChargeMicro(books)).and.to.equal(books.usage?.credits_micro ?? 0);
    expect(books.reservations).to.have.length(1);
    expect(books.reservations[0].status).to.be.oneOf(['settled', 'released']);
    return `${parts()} parts, ${books.usage?.credits_micro ?? 0} µcr, ended ${endedAfterMs} ms after terminate`;
  }

  it('an API+worker process killed with 12 chats and 4 streams in flight: each is found at once by its client X-Request-Id, and its outcome agrees with the ledger; a replay answers to its own id', async () => {
    const t = await tenant();
    await stack.stopApiWorker(); // one left by an earlier failure
    await stack.startApiWorker();
    const traces = Array.from({ length: 16 }, (_, i) => `lookup-${t.workspaceId}-${i}`);
    const inFlight = traces.map((trace, i) => i < 12
      ? send(t, '/v1/chat/completions', { method: 'POST', headers: { ...slowChat(4000), 'x-request-id': trace }, body: chatBody(`looked up ${i}`) }, stack.apiWorkerUrl)
      : t.fetchAt(stack.apiWorkerUrl, '/v1/chat/completions', {
        method: 'POST', headers: { ...json, 'x-request-id': trace }, body: chatBody(`a streamed answer looked up ${i}`, { stream: true, stream_options: { include_usage: true }, max_tokens: 400 }),
      }).then(async (res) => { await res.text().catch(() => ''); return res.status; }, () => 'connection lost'));
    await waitForHolds(t, 16);
    await stack.killApiWorker();
    const killedAt = Date.now();
    await Promise.all(inFlight);
    const atOnce = await Promise.all(traces.map((trace) => lookUp(t, trace)));
    const lookedUpWithinMs = Date.now() - killedAt;
    expect(atOnce.map((l) => l.status), JSON.stringify(atOnce.filter((l) => l.status !== 200))).to.deep.equal(Array(16).fill(200));
    for (const l of atOnce) expect(l.body.status).to.be.oneOf(['running', 'succeeded', 'failed', 'cancelled']);

    const rows = [];
    for (const trace of traces) {
      const outcome = await finalOutcome(t, trace);
      const lookup = await lookUp(t, trace);
      const books = await booksOf(stack.db, lookup.body.id!);
      rows.push({ client: { 'x-request-id': trace, answer: 'connection lost' }, lookup: lookup.body, books, outcome });
    }
    showOutcome('api-worker killed, looked up by client id', rows);
    for (const { outcome, books } of rows) {
      // Served (a chat continued on the worker), cut off (a stream, billed what was generated), or failed uncharged.
      expect(Math.round(outcome.credits_used * 1_000_000)).to.equal(ledgerChargeMicro(books));
      expect(books.reservations.filter((r) => r.status === 'settled')).to.have.length(outcome.status === 'failed' ? 0 : 1);
    }
    expect(rows.slice(0, 12).map((r) => r.outcome.status)).to.deep.equal(Array(12).fill('succeeded'));

    // An Idempotency-Key replay's x-request-id leads to the run it joined.
    const keyed = { method: 'POST', headers: { ...json, 'idempotency-key': `lookup-replay-${t.workspaceId}` }, body: chatBody('replayed') };
    const first = await t.fetch('/v1/chat/completions', keyed);
    const replay = await t.fetch('/v1/chat/completions', keyed);
    expect(replay.headers.get('x-idempotent-replayed')).to.equal('true');
    const replayLookup = await lookUp(t, replay.headers.get('x-request-id')!);
    expect(replayLookup.status).to.equal(200);
    expect(replayLookup.body).to.deep.include({ id: first.headers.get('x-request-id'), status: 'succeeded', credits_used: Number(first.headers.get('x-credits-used')) });
    showOutcome('idempotent replay looked up by its own id', [{ client: { status: replay.status, replayed: true }, lookup: replayLookup.body, books: await booksOf(stack.db, first.headers.get('x-request-id')!) }]);
    report.push({ fault: 'api-worker killed, looked up at once by client id', found: atOnce.filter((l) => l.status === 200).length, lookedUpWithinMs, replayFound: replayLookup.status });
    await expectBooksBalanced([t.workspaceId]);
  });

  it('a video job terminated while it runs ends failed with the reason, its hold given back, on both poll paths', async () => {
    const t = await tenant();
    const res = await postVideo(t, { model: 'sim-video', prompt: 'terminated job', duration: 2, resolution: '360p' });
    const { id } = (await res.json()) as { id: string };
    await waitFor('the job to hold its credits', async () => (await stack.db('reservations').where({ request_id: id, status: 'held' })).length === 1, 60_000);
    await temporal.workflow.getHandle(id).terminate('operator');
    const polled = await (await t.fetch(`/v1/videos/generations/${id}`)).json() as VideoJobObject & { error?: { code: string; message: string } };
    const openai = await (await t.fetch(`/v1/videos/${id}`)).json() as { status: string; error: { code: string } | null };
    const books = await booksOf(stack.db, id);
    showOutcome('video job terminated', [{ client: { created: res.status, id }, lookup: { generations: { status: polled.status, error: polled.error }, videos: { status: openai.status, error: openai.error } }, books }]);
    expect(polled.status).to.equal('failed');
    expect(polled.error?.code).to.equal('video_job_stopped');
    expect(openai).to.deep.include({ status: 'failed' });
    expect(openai.error?.code).to.equal('video_job_stopped');
    expect(books.reservations.map((r) => r.status)).to.deep.equal(['released']);
    expect(ledgerChargeMicro(books)).to.equal(0);
    report.push({ fault: 'video job terminated', job: polled.status, hold: books.reservations[0].status });
    await expectBooksBalanced([t.workspaceId]);
  });

  it('the worker killed while a budget alert webhook takes 8 s: the retry is the same delivery (same delivery id), recorded once as sent', async () => {
    const t = await tenant();
    const sink = new WebhookSink();
    await sink.start();
    try {
      const path = `/hook-${t.workspaceId}`;
      sink.slow.set(path, 8_000);
      const alert = await t.fetch('/v1/budget/alerts', { method: 'POST', headers: json, body: JSON.stringify({ threshold_type: 'credits', threshold: 0.000001, channels: { webhook: { url: `${sink.url}${path}` } } }) });
      expect(alert.status).to.equal(201);
      const chat = await send(t, '/v1/chat/completions', { method: 'POST', headers: json, body: chatBody('spend something') });
      expect(chat.status).to.equal(200);
      await waitFor('the webhook to be called', () => sink.calls.filter((c) => c.path === path).length === 1, 60_000);
      // Recorded before it was sent.
      const recorded = await stack.db('budget_alert_deliveries').join('budget_alerts', 'budget_alerts.id', 'budget_alert_deliveries.alert_id')
        .where('budget_alerts.workspace_id', t.workspaceId).select('budget_alert_deliveries.status');
      expect(recorded.map((r) => r.status)).to.deep.equal(['sending']);
      await stack.killWorker();
      const killedAt = Date.now();
      await stack.startWorker();
      const deliveries = await waitFor('the delivery to be recorded sent', async () => {
        const rows = await stack.db('budget_alert_deliveries').join('budget_alerts', 'budget_alerts.id', 'budget_alert_deliveries.alert_id')
          .where('budget_alerts.workspace_id', t.workspaceId).select('budget_alert_deliveries.status', 'budget_alert_deliveries.channel');
        return rows.length === 1 && rows[0].status === 'sent' ? rows : null;
      }, 120_000);
      const calls = sink.calls.filter((c) => c.path === path);
      const ids = calls.map((c) => c.headers['x-gateway-delivery-id']);
      if (process.env.TEST_VERBOSE) console.log(JSON.stringify({ fault: 'worker killed during a slow webhook', posts: calls.map((c) => ({ 'x-gateway-delivery-id': c.headers['x-gateway-delivery-id'], 'idempotency-key': c.headers['idempotency-key'] })), deliveries, chat: { client: chat, books: await booksOf(stack.db, chat.requestId!) } }));
      expect(calls.length).to.be.at.least(2);
      expect(ids[0]).to.match(/^dlv_[0-9a-f]{32}$/);
      expect(new Set(ids).size, 'one delivery id').to.equal(1);
      expect(calls.every((c) => c.headers['idempotency-key'] === ids[0])).to.equal(true);
      report.push({ fault: 'worker killed during a slow webhook', posts: calls.length, deliveryIds: new Set(ids).size, recoveredMs: Date.now() - killedAt });
      await expectBooksBalanced([t.workspaceId]);
    } finally {
      await sink.stop();
    }
  });

  it('the Temporal server killed for 10 s during 20 slow chats: every client gets its answer or outcome_unknown, each charged once', async () => {
    const t = await tenant();
    const inFlight = await twentySlowChats(t, 3000, 'temporal');
    await stack.killTemporal();
    const killedAt = Date.now();
    const during = send(t, '/v1/chat/completions', { method: 'POST', headers: json, body: chatBody('while Temporal is down') });
    await new Promise((r) => setTimeout(r, 10_000));
    await stack.startTemporal();
    const restartedAt = Date.now();
    const views = await Promise.all(inFlight);
    const duringView = await during;
    report.push({ fault: 'temporal killed 10 s', clients: tally(views), during: tally([duringView]), recoveredMs: Date.now() - restartedAt, outageMs: restartedAt - killedAt });

    for (const v of views) if (v.status !== 200) expect(v).to.include({ status: 504, code: 'outcome_unknown' });
    expect([200, 503]).to.include(duringView.status);
    await expectEveryOutcomeKnown(t, [...views, duringView], stack.db);
    const answered = [...views, duringView].filter((v) => v.status === 200).length;
    expect(await settledCount(t.workspaceId)).to.be.at.least(answered).and.at.most(21);
    await expectBooksBalanced([t.workspaceId]);
  });

  it('the API process killed mid-request: a retry with the same Idempotency-Key joins the run, a client X-Request-Id finds it, each charged once', async () => {
    const t = await tenant();
    const keyed = Array.from({ length: 10 }, (_, i) => ({ key: `api-kill-${i}`, body: chatBody(`keyed ${i}`) }));
    const traced = Array.from({ length: 5 }, (_, i) => ({ trace: `client-trace-${t.workspaceId}-${i}`, body: chatBody(`traced ${i}`) }));
    const inFlight = [
      ...keyed.map((k) => send(t, '/v1/chat/completions', { method: 'POST', headers: { ...slowChat(3000), 'idempotency-key': k.key }, body: k.body })),
      ...traced.map((k) => send(t, '/v1/chat/completions', { method: 'POST', headers: { ...slowChat(3000), 'x-request-id': k.trace }, body: k.body })),
    ];
    await waitForHolds(t, 15);
    await stack.killApi();
    const killedAt = Date.now();
    const lost = await Promise.all(inFlight);
    expect(lost.every((v) => v.status === 'connection lost')).to.equal(true);
    await stack.startApi();

    const retried = await Promise.all(keyed.map(async (k) => {
      const res = await t.fetch('/v1/chat/completions', { method: 'POST', headers: { ...json, 'idempotency-key': k.key }, body: k.body });
      return { status: res.status, replayed: res.headers.get('x-idempotent-replayed') };
    }));
    expect(retried).to.deep.equal(Array(10).fill({ status: 200, replayed: 'true' }));
    for (const k of traced) expect((await finalOutcome(t, k.trace)).status).to.equal('succeeded');
    report.push({ fault: 'api killed mid-request', clients: tally(lost), retriedWithKey: retried.length, recoveredMs: Date.now() - killedAt });
    expect(await settledCount(t.workspaceId)).to.equal(15);
    await expectBooksBalanced([t.workspaceId]);
  });

  it('an API+worker process asked while Temporal is down, then killed mid-request: first hops give their holds back or end in their runs, each charged once', async () => {
    const t = await tenant();
    await stack.startApiWorker();
    const sendAt = (path: string, init: RequestInit) => send(t, path, init, stack.apiWorkerUrl);

    // The first hop holds while its run's start fails: the hold is given back at once, nothing is charged.
    await stack.killTemporal();
    const refused = await sendAt('/v1/chat/completions', { method: 'POST', headers: json, body: chatBody('while Temporal is down') });
    await stack.startTemporal();
    expect(refused.status, JSON.stringify(refused)).to.be.oneOf([503, 504]);
    const refusedHolds = await stack.db('reservations').where({ request_id: refused.requestId });
    if (refused.code === 'temporal_unavailable') expect(refusedHolds.map((r) => r.status)).to.deep.equal(['released']);

    // Killed while its first hops wait on the model: each run's task moves to the worker process, which holds
    // (the same reservation), calls and settles; every request ends succeeded, charged once.
    const traced = Array.from({ length: 8 }, (_, i) => `api-worker-${t.workspaceId}-${i}`);
    const inFlight = traced.map((trace, i) => sendAt('/v1/chat/completions', {
      method: 'POST', headers: { ...slowChat(3000), 'x-request-id': trace }, body: chatBody(`api-worker ${i}`),
    }));
    await waitForHoldsWithRuns(t, 8);
    await stack.killApiWorker();
    const killedAt = Date.now();
    const lost = await Promise.all(inFlight);
    expect(lost.every((v) => v.status === 'connection lost')).to.equal(true);
    for (const trace of traced) expect((await finalOutcome(t, trace)).status).to.equal('succeeded');
    report.push({ fault: 'api-worker: temporal down at start, then killed mid-request', refused: tally([refused]), clients: tally(lost), recoveredMs: Date.now() - killedAt });
    expect(await settledCount(t.workspaceId)).to.equal(8);
    await expectBooksBalanced([t.workspaceId]);
  });

  it('the API process killed at the end of one stream and in the middle of another: the first is billed what it delivered and its run ends succeeded, the second is billed what was generated', async () => {
    const t = await tenant();
    const stream = (content: string) => t.fetch('/v1/chat/completions', {
      method: 'POST', headers: json, body: chatBody(content, { stream: true, stream_options: { include_usage: true }, max_tokens: 400 }),
    });
    const finished = await stream('stream that finishes');
    const finishedId = finished.headers.get('x-request-id')!;
    const cut = await stream('stream that is cut off in the middle of its answer, which is a longer one than the first');
    const cutId = cut.headers.get('x-request-id')!;
    const cutReader = cut.body!.getReader();
    let cutText = '';
    const reading = (async () => {
      for (;;) {
        const { value, done } = await cutReader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        cutText += Buffer.from(value!).toString();
      }
    })();

    const reader = finished.body!.getReader();
    let text = '';
    while (!text.includes('data: [DONE]')) text += Buffer.from((await reader.read()).value!).toString();
    await stack.killApi();
    const killedAt = Date.now();
    await reading;
    expect(cutText).to.not.include('[DONE]');

    const reported = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((c) => c.usage).usage;
    const delivered = await stack.db('usage_records').where({ request_id: finishedId }).first();
    expect(delivered).to.include({ status: 'succeeded' });
    expect(Number(delivered.credits_micro)).to.equal(Math.round(reported.credits_used * 1_000_000));

    await stack.startApi();
    const cutUsage = await waitFor('the cut-off stream to be billed', () => stack.db('usage_records').where({ request_id: cutId }).first(), 120_000);
    // The run of the stream whose [DONE] was written follows what its client received: succeeded, charged once.
    const finishedOutcome = await finalOutcome(t, finishedId);
    const finishedBooks = await booksOf(stack.db, finishedId);
    showOutcome('api killed right after [DONE]', [{ client: { status: finished.status, done: true, usage: reported }, lookup: finishedOutcome, books: finishedBooks }]);
    expect(finishedOutcome).to.deep.include({ status: 'succeeded', credits_used: reported.credits_used });
    expect(ledgerChargeMicro(finishedBooks)).to.equal(Math.round(reported.credits_used * 1_000_000));
    report.push({ fault: 'api killed at the end / middle of a stream', finished: `${delivered.status} ${delivered.credits_micro} µcr`, finishedRun: finishedOutcome.status, cut: `${cutUsage.status} ${cutUsage.credits_micro} µcr`, cutBilledAfterMs: Date.now() - killedAt });
    expect(cutUsage.status).to.equal('cancelled');
    expect(Number(cutUsage.output_tokens)).to.be.greaterThan(0);
    expect(Number(cutUsage.credits_micro)).to.be.greaterThan(0);
    const deliveredChars = cutText.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '').join('').length;
    expect(Number(cutUsage.output_tokens)).to.be.at.least(Math.ceil(deliveredChars / 4) - 20);
    await expectBooksBalanced([t.workspaceId]);
  });

  it('an API+worker process killed in the middle of a stream it serves as a local activity: billed what was generated, from the progress it kept in Postgres', async () => {
    const t = await tenant();
    // A second between the stream's parts: it runs for about six.
    await stack.startApiWorker({ SIMULATED_STREAM_DELAY_MS: '1000' });
    const cut = await t.fetchAt(stack.apiWorkerUrl, '/v1/chat/completions', {
      method: 'POST', headers: json, body: chatBody('a stream cut off in the middle of its answer, which is a longer one', { stream: true, stream_options: { include_usage: true }, max_tokens: 400 }),
    });
    const cutId = cut.headers.get('x-request-id')!;
    const reader = cut.body!.getReader();
    let cutText = '';
    const chunks = () => cutText.split('\n').filter((l) => l.startsWith('data: {')).length;
    // Four parts in (three seconds): its progress was written (at most once a second) a few times.
    while (chunks() < 5) {
      const { value, done } = await reader.read();
      if (done) break;
      cutText += Buffer.from(value).toString();
    }
    expect(cutText).to.not.include('[DONE]');
    await stack.killApiWorker();
    const killedAt = Date.now();
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      cutText += Buffer.from(value!).toString();
    }

    // Its run's task goes to the worker process, whose replay finds no connection to stream to: the stream's
    // own queue does not answer, and the hop is billed from the progress row.
    const cutUsage = await waitFor('the cut-off stream to be billed', () => stack.db('usage_records').where({ request_id: cutId }).first(), 120_000);
    report.push({ fault: 'api-worker killed in the middle of a stream', cut: `${cutUsage.status} ${cutUsage.credits_micro} µcr`, cutBilledAfterMs: Date.now() - killedAt });
    expect(cutUsage.status).to.equal('cancelled');
    const deliveredChars = cutText.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '').join('').length;
    expect(Number(cutUsage.output_tokens)).to.be.greaterThan(0);
    expect(Number(cutUsage.credits_micro)).to.be.greaterThan(0);
    // The last write is at most a second older than the last byte delivered.
    expect(Number(cutUsage.output_tokens)).to.be.at.least(Math.ceil(deliveredChars / 4) - 20);
    expect(await stack.db('stream_progress').where('reservation_id', 'like', `req-${cutId}:%`)).to.have.length.at.most(1);
    await expectBooksBalanced([t.workspaceId]);
  });

  it('the worker killed during video submission: each job is submitted once, ends succeeded with one charge and a downloadable MP4', async () => {
    const t = await tenant();
    const slowSubmission = { 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': '30000', 'x-simulate-fail-times': '1' };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await postVideo(t, { model: 'sim-video', prompt: `submitted once ${i}`, duration: 2, resolution: '360p' }, slowSubmission);
      expect(res.status).to.equal(200);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const accepted = () => readAcceptedSubmissions(stack.simulatorDir).filter((s) => ids.some((id) => s.key.startsWith(`${id}:`)));
    await waitFor('the provider to take the 3 jobs', () => accepted().length === 3, 60_000);
    await stack.killWorker();
    const killedAt = Date.now();
    await stack.startWorker();
    const jobs = await Promise.all(ids.map((id) => waitForJob(t.fetch, id, { timeoutMs: 180_000 }).then((r) => r.job)));
    report.push({ fault: 'worker killed during video submission', jobs: jobs.map((j) => j.status).join(','), submissions: accepted().length, recoveredMs: Date.now() - killedAt });
    await expectJobsDelivered(t, jobs);
    expect(accepted().map((s) => s.key).sort()).to.deep.equal(ids.map((id) => `${id}:0`).sort());
  });

  it('MinIO down for 30 s around the copy of finished videos: the jobs wait it out and succeed, no internal address ever shown', async () => {
    const t = await tenant();
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await postVideo(t, { model: 'sim-video', prompt: `outlives storage ${i}`, duration: 2, resolution: '360p' });
      ids.push(((await res.json()) as { id: string }).id);
    }
    await Promise.all(ids.map((id) => waitForJob(t.fetch, id, { until: (j) => j.status === 'processing' })));
    await stack.stopMinio();
    const stoppedAt = Date.now();
    await new Promise((r) => setTimeout(r, 30_000));
    const midway = await Promise.all(ids.map((id) => waitForJob(t.fetch, id, { until: () => true }).then((r) => r.job)));
    expect(midway.map((j) => j.status)).to.deep.equal(['processing', 'processing']);
    await stack.startMinio();
    const restartedAt = Date.now();
    const jobs = await Promise.all(ids.map((id) => waitForJob(t.fetch, id, { timeoutMs: 180_000 }).then((r) => r.job)));
    report.push({ fault: 'minio down 30 s around video copy', jobs: jobs.map((j) => j.status).join(','), recoveredMs: Date.now() - restartedAt, outageMs: restartedAt - stoppedAt });
    await expectJobsDelivered(t, jobs);
  });

  it('MinIO down at boot: a new API and worker start, serve chat and report storage degraded', async () => {
    await stack.stopMinio();
    await stack.killApi();
    await stack.killWorker();
    await stack.startWorker();
    await stack.startApi();
    const t = await tenant();
    const health = await fetch(`${stack.apiUrl}/healthz`);
    const body = (await health.json()) as { status: string; s3: { ok: boolean } };
    expect([health.status, body.status, body.s3.ok]).to.deep.equal([200, 'degraded', false]);
    const chat = await send(t, '/v1/chat/completions', { method: 'POST', headers: json, body: chatBody('no storage needed') });
    expect(chat.status).to.equal(200);
    await stack.startMinio();
    await waitFor('storage to be back', async () => ((await (await fetch(`${stack.apiUrl}/healthz`)).json()) as { status: string }).status === 'ok');
    report.push({ fault: 'minio down at boot', clients: tally([chat]), health: body.status });
    await expectBooksBalanced([t.workspaceId]);
  });

  /** Uploads the JSONL lines and creates a batch of chat completions on them; its id. */
  async function createBatch(t: FaultTenant, lines: string[]): Promise<string> {
    const form = new FormData();
    form.set('purpose', 'batch');
    form.set('file', new Blob([`${lines.join('\n')}\n`], { type: 'application/jsonl' }), 'batch.jsonl');
    const file = (await (await t.fetch('/v1/files', { method: 'POST', body: form })).json()) as { id: string };
    const created = await t.fetch('/v1/batches', { method: 'POST', headers: json, body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }) });
    expect(created.status).to.equal(200);
    return ((await created.json()) as { id: string }).id;
  }

  /** The batch once it ended, as the API answers it (through restarts of the API). */
  function batchEnded(t: FaultTenant, batchId: string) {
    return waitFor('the batch to end', async () => {
      const res = await t.fetch(`/v1/batches/${batchId}`).catch(() => null);
      if (res?.status !== 200) return null;
      const batch = (await res.json()) as { status: string; request_counts: { total: number; completed: number; failed: number }; output_file_id: string | null; error_file_id: string | null };
      return ['completed', 'failed', 'cancelled', 'expired'].includes(batch.status) ? batch : null;
    }, 240_000);
  }

  it('a batch with the worker, the API and the Temporal server killed (-9) mid-run: every line completes once, is charged once, the books reconcile', async () => {
    // A run that continues as new every 8 lines, 5 lines at a time: the kill lands mid-run, between runs or both.
    await stack.stopApi();
    await stack.startApi({ BATCH_CONCURRENCY: '5', BATCH_LINES_PER_RUN: '8' });
    const t = await tenant({ credits: 100 });
    const n = 30;
    const lines = Array.from({ length: n }, (_, i) => JSON.stringify({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat-slow', max_tokens: 32, messages: [{ role: 'user', content: `line ${i}` }] } }));
    const batchId = await createBatch(t, lines);
    const settledLines = async () => Number((await stack.db('usage_records').where({ batch_id: batchId }).count<{ n: string }[]>('* as n'))[0].n);
    // Some lines done, others in flight (holding credits), most not started.
    await waitFor('lines settled and in flight', async () => (await settledLines()) >= 3 && (await reservationCount(t.workspaceId, 'held')) >= 1, 60_000);
    await stack.killWorker();
    await stack.killApi();
    await stack.killTemporal();
    const killedAt = Date.now();
    await new Promise((r) => setTimeout(r, 2000));
    await stack.startTemporal();
    await stack.startWorker();
    await stack.startApi();
    const done = await batchEnded(t, batchId);
    report.push({ fault: 'batch: worker, api and temporal killed', lines: n, recoveredMs: Date.now() - killedAt, counts: JSON.stringify(done.request_counts) });
    expect(done.status).to.equal('completed');
    expect(done.request_counts).to.deep.equal({ total: n, completed: n, failed: 0 });
    // Every line once in the output, once in the usage records, settled once.
    const output = (await (await t.fetch(`/v1/files/${done.output_file_id}/content`)).text()).trim().split('\n').map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number; request_id: string } });
    expect(output.map((l) => l.custom_id)).to.deep.equal(lines.map((_, i) => `line-${i}`));
    expect(output.every((l) => l.response.status_code === 200)).to.equal(true);
    const usage = await stack.db('usage_records').where({ batch_id: batchId }).select('batch_custom_id', 'request_id', 'credits_micro');
    expect(usage.map((u) => u.batch_custom_id).sort()).to.deep.equal(lines.map((_, i) => `line-${i}`).sort());
    const settled = await stack.db('reservations').whereIn('request_id', usage.map((u) => u.request_id)).andWhere({ status: 'settled' }).select('request_id', 'charged_micro');
    expect(settled).to.have.length(n);
    const charged = settled.reduce((sum, r) => sum + Number(r.charged_micro), 0);
    expect(charged).to.equal(usage.reduce((sum, u) => sum + Number(u.credits_micro), 0));
    expect(-(await ledgerSpent(t.workspaceId))).to.equal(charged);
    await expectBooksBalanced([t.workspaceId]);
  });

  it("a batch on the provider's batch API with the worker killed (-9) during its submission and while it is polled: one upstream batch, every line charged once", async () => {
    // OpenAI's Batch API on a fake upstream, and a copy of gpt-4o-mini whose batches go there.
    const upstream = new FakeUpstream();
    await upstream.start();
    let answerCreate!: () => void;
    const opts = { answer: echoAnswer, pollsBeforeEnd: 1_000_000, createAnswered: new Promise<void>((resolve) => { answerCreate = resolve; }) };
    const fake = new FakeOpenAIBatches(upstream, opts);
    const record = nativeBatchRecord(loadCatalogFiles().find((m) => m.slug === 'gpt-4o-mini')!, 'gpt-4o-mini-native-faults');
    await upsertOperatorModel(stack.db, record);
    const openai = { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-batch-upstream' };
    try {
      await stack.stopApi();
      await stack.startApi(openai);
      await stack.stopWorker();
      await stack.startWorker(openai);
      const t = await tenant({ credits: 100 });
      const prompts = Array.from({ length: 6 }, (_, i) => 'word '.repeat(i + 1).trim());
      const lines = prompts.map((content, i) => JSON.stringify({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: record.slug, max_tokens: 32, messages: [{ role: 'user', content }] } }));
      const batchId = await createBatch(t, lines);

      // The provider made its batch, and the worker dies before the answer reaches it.
      await waitFor('the upstream batch to be made', async () => fake.batches.size === 1, 60_000);
      await stack.killWorker();
      answerCreate();
      const killedAt = Date.now();
      await stack.startWorker(openai);
      // Polled again (the retried submission found the batch by its tag), then the worker dies while it polls.
      const [upstreamBatch] = [...fake.batches.values()];
      await waitFor('the upstream batch to be polled', async () => upstreamBatch.reads >= 2, 120_000);
      await stack.killWorker();
      await stack.startWorker(openai);
      opts.pollsBeforeEnd = 0; // the provider's batch ends at its next read
      const done = await batchEnded(t, batchId);
      report.push({ fault: 'provider batch: worker killed in submit and poll', lines: lines.length, recoveredMs: Date.now() - killedAt, counts: JSON.stringify(done.request_counts) });
      expect(done.status).to.equal('completed');
      expect(done.request_counts).to.deep.equal({ total: lines.length, completed: lines.length, failed: 0 });
      // One file, one batch upstream.
      expect(fake.batches.size).to.equal(1);
      expect(upstream.received('POST /v1/files')).to.have.length(1);
      expect(upstream.received('POST /v1/batches')).to.have.length(1);
      expect(upstream.received('GET /v1/batches')).to.have.length(1); // the retried submission's look-up
      // Every line once in the output and the usage records, settled once at the batch price.
      const output = (await (await t.fetch(`/v1/files/${done.output_file_id}/content`)).text()).trim().split('\n').map((l) => JSON.parse(l) as { custom_id: string });
      expect(output.map((l) => l.custom_id)).to.deep.equal(prompts.map((_, i) => `line-${i}`));
      const usage = await stack.db('usage_records').where({ batch_id: batchId }).select('request_id', 'credits_micro');
      expect(usage).to.have.length(lines.length);
      const settled = await stack.db('reservations').whereIn('request_id', usage.map((u) => u.request_id)).andWhere({ status: 'settled' }).select('charged_micro');
      expect(settled).to.have.length(lines.length);
      const charged = settled.reduce((sum, r) => sum + Number(r.charged_micro), 0);
      expect(charged).to.equal(echoedCharges(record, prompts));
      expect(-(await ledgerSpent(t.workspaceId))).to.equal(charged);
      await expectBooksBalanced([t.workspaceId]);
    } finally {
      answerCreate();
      await stack.stopWorker().catch(() => undefined);
      await stack.startWorker();
      await stack.stopApi().catch(() => undefined);
      await stack.startApi();
      await upstream.stop();
    }
  });

  /** What the ledger's rows of reservations add up to (minus what was charged). */
  const ledgerSpent = async (workspaceId: string) => Number((await stack.db('credit_ledger').where({ workspace_id: workspaceId }).whereNotNull('reservation_id').sum<{ s: string }[]>('amount_micro as s'))[0].s ?? 0);

  it('leaves the books of every workspace balanced', async () => {
    await expectBooksBalanced(tenants);
  });

  async function expectJobsDelivered(t: FaultTenant, jobs: VideoJobObject[]): Promise<void> {
    for (const job of jobs) {
      expect(job.status, JSON.stringify(job.error)).to.equal('succeeded');
      await expectPlayableMp4(job.url!);
      const settles = await stack.db('reservations').where({ request_id: job.id, status: 'settled' });
      expect(settles).to.have.length(1);
    }
    await expectBooksBalanced([t.workspaceId]);
  }
});
