/**
 * Graceful shutdown and the probes, on real processes (`node dist/main/api.js`, `worker.js`, `api-worker.js`
 * against a Temporal dev server, MinIO and a database of their own: test/faults/support/fault-stack.ts):
 * SIGTERM makes a process unready at once and refuse new requests, lets what runs finish within
 * GATEWAY_SHUTDOWN_GRACE_SECONDS, cuts what remains with an error and exact charges, and exits 0.
 */
import { expect } from 'chai';
import http from 'node:http';
import { ConfigError, loadConfig } from '../../config/env';
import { FaultStack, type FaultTenant } from '../faults/support/fault-stack';
import { BALANCED, reconcile } from '../faults/support/reconcile';
import { waitFor } from '../support/notification-sinks';

const json = { 'content-type': 'application/json' };
const chatBody = (content: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'sim-chat', max_tokens: 64, messages: [{ role: 'user', content }], ...extra });
/** A chat whose model takes `delayMs` to answer. */
const slowChat = (delayMs: number) => ({ ...json, 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': String(delayMs) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface StreamRead {
  status: number;
  requestId: string | null;
  /** The `data:` payloads, in order (`[DONE]` as is, the rest parsed). */
  events: unknown[];
}

/** Opens a streamed chat completion; `firstEvent` resolves at its first event, `done` when the stream ended. */
function openStream(tenant: FaultTenant, at: string, content: string): { firstEvent: Promise<void>; done: Promise<StreamRead> } {
  let markFirst!: () => void;
  const firstEvent = new Promise<void>((resolve) => { markFirst = resolve; });
  const done = (async () => {
    const res = await tenant.fetchAt(at, '/v1/chat/completions', { method: 'POST', headers: json, body: chatBody(content, { stream: true }) });
    const read: StreamRead = { status: res.status, requestId: res.headers.get('x-request-id'), events: [] };
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        buffered += decoder.decode(value, { stream: true });
        let at2: number;
        while ((at2 = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, at2);
          buffered = buffered.slice(at2 + 2);
          const data = block.split('\n').find((line) => line.startsWith('data: '))?.slice(6);
          if (data === undefined) continue;
          read.events.push(data === '[DONE]' ? data : JSON.parse(data));
          markFirst();
        }
      }
    } catch {
      read.events.push('connection lost');
    }
    markFirst();
    return read;
  })();
  return { firstEvent, done };
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { headers });
  return { status: res.status, body: await res.json().catch(() => null), headers: res.headers };
}

/** A GET's status with a Host header of our choosing (fetch sends its own). */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { host } }, (res) => { res.resume(); resolve(res.statusCode!); }).on('error', reject);
  });
}

/** The request's usage record and reservations, from the database. */
async function books(stack: FaultStack, requestId: string): Promise<{ usage: any; reservations: any[] }> {
  return {
    usage: await stack.db('usage_records').where({ request_id: requestId }).first(),
    reservations: await stack.db('reservations').where({ request_id: requestId }),
  };
}

describe('shutdown settings', () => {
  it('GATEWAY_SHUTDOWN_GRACE_SECONDS: 30 s by default, seconds with up to 3 decimals, anything else refused at boot', () => {
    expect(loadConfig({}).shutdownGraceMs).to.equal(30_000);
    expect(loadConfig({ GATEWAY_SHUTDOWN_GRACE_SECONDS: '2.5' }).shutdownGraceMs).to.equal(2_500);
    expect(loadConfig({ GATEWAY_SHUTDOWN_GRACE_SECONDS: '0' }).shutdownGraceMs).to.equal(0);
    for (const bad of ['-1', 'ten', '1e3', '30s', '1.2345']) {
      expect(() => loadConfig({ GATEWAY_SHUTDOWN_GRACE_SECONDS: bad }), bad).to.throw(ConfigError, /GATEWAY_SHUTDOWN_GRACE_SECONDS/);
    }
  });

  it('WORKER_HEALTH_PORT: a port number (absent: 9464, or a free port when taken)', () => {
    expect(loadConfig({}).workerHealthPort).to.equal(undefined);
    expect(loadConfig({ WORKER_HEALTH_PORT: '9500' }).workerHealthPort).to.equal(9500);
    expect(() => loadConfig({ WORKER_HEALTH_PORT: 'http' })).to.throw(ConfigError, /WORKER_HEALTH_PORT/);
  });
});

describe('graceful shutdown and probes (separate processes)', function () {
  this.timeout(300_000);
  let stack: FaultStack;
  const tenants: string[] = [];

  before(async function () {
    this.timeout(300_000);
    stack = await FaultStack.start();
  });
  after(async function () {
    this.timeout(60_000);
    await stack?.stop();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') return;
    expect(await reconcile(stack.db, tenants)).to.deep.equal(BALANCED);
  });

  async function tenant(): Promise<FaultTenant> {
    const t = await stack.newTenant({ credits: 100 });
    tenants.push(t.workspaceId);
    return t;
  }

  it('probes: /livez and /readyz on the API port and the worker health port; /readyz 503 while Postgres is unreachable', async () => {
    for (const base of [stack.apiUrl, stack.workerHealthUrl]) {
      const live = await getJson(`${base}/livez`);
      expect(live.status, base).to.equal(200);
      expect(live.body.status).to.equal('ok');
      const ready = await getJson(`${base}/readyz`);
      expect(ready.status, base).to.equal(200);
      expect(ready.body).to.include({ status: 'ready' });
      expect(ready.body.postgres.ok).to.equal(true);
      expect(ready.body.temporal.ok).to.equal(true);
    }
    // An orchestrator probes by address: a Host the API does not answer for still gets its probes (and only them).
    expect(await statusWithHost(`${stack.apiUrl}/livez`, '10.1.2.3:8080')).to.equal(200);
    expect(await statusWithHost(`${stack.apiUrl}/readyz`, '10.1.2.3:8080')).to.equal(200);
    expect(await statusWithHost(`${stack.apiUrl}/v1/models`, '10.1.2.3:8080')).to.equal(421);
    // Never the web app's index.
    expect((await fetch(`${stack.apiUrl}/readyz/x`)).status).to.equal(404);

    await stack.blockPostgres();
    try {
      for (const base of [stack.apiUrl, stack.workerHealthUrl]) {
        const ready = await getJson(`${base}/readyz`);
        expect(ready.status, base).to.equal(503);
        expect(ready.body.status).to.equal('unavailable');
        expect(ready.body.postgres.ok).to.equal(false);
        expect(ready.body.temporal.ok).to.equal(true);
        expect((await getJson(`${base}/livez`)).status, base).to.equal(200);
      }
    } finally {
      await stack.allowPostgres();
    }
    await waitFor('the API ready again', async () => (await fetch(`${stack.apiUrl}/readyz`)).status === 200 || null, 30_000);
  });

  it('an API on SIGTERM: unready and refusing at once, its stream and slow request finish, then it exits 0', async () => {
    await stack.stopApi();
    await stack.startApi({ GATEWAY_SHUTDOWN_GRACE_SECONDS: '30', SIMULATED_STREAM_DELAY_MS: '700' });
    const t = await tenant();
    const api = stack.apiUrl;
    const stream = openStream(t, api, 'a stream that outlives the signal');
    await stream.firstEvent;
    const slow = t.fetchAt(api, '/v1/chat/completions', { method: 'POST', headers: slowChat(4000), body: chatBody('a slow answer') })
      .then(async (res) => ({ status: res.status, requestId: res.headers.get('x-request-id'), body: (await res.json()) as any }));
    await sleep(500); // the slow request is in flight

    const signalledAt = Date.now();
    const exited = stack.signal('api', 'SIGTERM');
    const ready = await waitFor('/readyz to say draining', async () => {
      const answer = await getJson(`${api}/readyz`);
      return answer.status === 503 ? answer : null;
    }, 5_000);
    expect(Date.now() - signalledAt).to.be.below(3_000);
    expect(ready.body).to.deep.equal({ status: 'draining' });
    expect((await getJson(`${api}/livez`)).status).to.equal(200);
    const refused = await t.fetchAt(api, '/v1/chat/completions', { method: 'POST', headers: json, body: chatBody('too late') });
    expect(refused.status).to.equal(503);
    expect(refused.headers.get('connection')).to.equal('close');
    expect(refused.headers.get('retry-after')).to.equal('1');
    const refusedBody = (await refused.json()) as { error: { code: string; type: string; message: string } };
    expect(refusedBody.error).to.include({ code: 'server_shutting_down', type: 'server_error' });
    expect(await stack.db('reservations').where({ request_id: refused.headers.get('x-request-id') })).to.deep.equal([]);

    const streamed = await stream.done;
    expect(streamed.status).to.equal(200);
    expect(streamed.events.at(-1)).to.equal('[DONE]');
    expect(streamed.events.some((e) => typeof e === 'object' && e !== null && 'error' in e)).to.equal(false);
    const answered = await slow;
    expect(answered.status, JSON.stringify(answered.body)).to.equal(200);
    expect(answered.body.choices[0].message.content).to.be.a('string');

    expect(await exited).to.equal(0);
    expect(Date.now() - signalledAt).to.be.below(30_000);
    // Gone: new connections are refused.
    expect(await fetch(`${api}/livez`).then(() => 'answered', () => 'refused')).to.equal('refused');
    // Both charged once, as their usage records say.
    for (const id of [streamed.requestId!, answered.requestId!]) {
      const { usage, reservations } = await books(stack, id);
      expect(usage.status, id).to.equal('succeeded');
      expect(reservations.filter((r) => r.status === 'settled')).to.have.length(1);
    }
    await stack.startApi();
  });

  it('past a short grace period: the stream is cut with an error event and billed for what was generated; the process exits 0', async () => {
    await stack.startApiWorker({ GATEWAY_SHUTDOWN_GRACE_SECONDS: '1', SIMULATED_STREAM_DELAY_MS: '2000' });
    const t = await tenant();
    const stream = openStream(t, stack.apiWorkerUrl, 'a stream cut by the shutdown');
    await stream.firstEvent;
    const slow = t.fetchAt(stack.apiWorkerUrl, '/v1/chat/completions', { method: 'POST', headers: slowChat(8000), body: chatBody('an answer past the grace period') })
      .then(async (res) => ({ status: res.status, headers: res.headers, body: (await res.json()) as any }));
    await sleep(500); // the slow request is in flight
    const signalledAt = Date.now();
    const exited = stack.signal('api-worker', 'SIGTERM');
    const streamed = await stream.done;
    // Cut about a second after the signal, long before its last part (6 parts, 2 s apart).
    expect(Date.now() - signalledAt).to.be.below(9_000);

    // The request still waiting for its answer: 504 outcome_unknown, pointing at its outcome; its run goes on elsewhere.
    const cut = await slow;
    expect(cut.status).to.equal(504);
    expect(cut.body.error).to.include({ code: 'outcome_unknown', type: 'server_error' });
    const cutId = cut.headers.get('x-request-id')!;
    expect(cut.body.error.message).to.include(`GET /v1/requests/${cutId}`);
    expect(cut.headers.get('connection')).to.equal('close');
    expect(streamed.status).to.equal(200);
    // As a stream the upstream broke off ends: the error event, then the end of the stream; no finish chunk.
    expect(streamed.events.at(-1)).to.equal('[DONE]');
    const last = streamed.events.at(-2) as { error: { code: string; type: string } };
    expect(last.error).to.include({ code: 'server_shutting_down', type: 'server_error' });
    expect(streamed.events.some((e) => (e as { choices?: Array<{ finish_reason: string | null }> }).choices?.some((c) => c.finish_reason))).to.equal(false);
    expect(await exited).to.equal(0);

    // The books: cancelled with the shutdown as its code, charged exactly once for the part that was generated.
    const { usage, reservations } = await waitFor('the cut stream recorded', async () => {
      const found = await books(stack, streamed.requestId!);
      return found.usage && found.reservations.every((r) => r.status !== 'held') ? found : null;
    }, 60_000);
    expect(usage).to.include({ status: 'cancelled', error_code: 'server_shutdown' });
    expect(Number(usage.output_tokens)).to.be.greaterThan(0);
    const settled = reservations.filter((r) => r.status === 'settled');
    expect(settled).to.have.length(1);
    expect(Number(settled[0].charged_micro)).to.equal(Number(usage.credits_micro)).and.greaterThan(0);
    const outcome = await getJson(`${stack.apiUrl}/v1/requests/${streamed.requestId}`, { authorization: `Bearer ${t.key}` });
    expect(outcome.body).to.include({ status: 'cancelled' });
    expect(outcome.body.credits_used).to.be.greaterThan(0);

    // The cut request's run, continued by the worker process, ends and is charged once, as its outcome says.
    const finished = await waitFor('the cut request\'s outcome', async () => {
      const answer = await getJson(`${stack.apiUrl}/v1/requests/${cutId}`, { authorization: `Bearer ${t.key}` });
      return answer.status === 200 && answer.body.status !== 'running' ? answer.body : null;
    }, 120_000);
    expect(finished.status).to.equal('succeeded');
    const cutBooks = await books(stack, cutId);
    expect(cutBooks.reservations.filter((r) => r.status === 'settled')).to.have.length(1);
    expect(Number(cutBooks.usage.credits_micro)).to.equal(Math.round(finished.credits_used * 1e6));
  });

  it('a worker on SIGTERM: unready at once, lets its running hop finish (charged once), then exits 0', async () => {
    const t = await tenant();
    const slow = t.fetch('/v1/chat/completions', { method: 'POST', headers: slowChat(5000), body: chatBody('a hop that outlives the signal') })
      .then(async (res) => ({ status: res.status, requestId: res.headers.get('x-request-id'), body: (await res.json()) as any }));
    await sleep(1500); // its hop is running on the worker
    const exited = stack.signal('worker', 'SIGTERM');
    const ready = await waitFor('the worker\'s /readyz to say draining', async () => {
      const answer = await getJson(`${stack.workerHealthUrl}/readyz`).catch(() => null);
      return answer?.status === 503 ? answer : null;
    }, 5_000);
    expect(ready.body).to.deep.equal({ status: 'draining' });
    expect((await getJson(`${stack.workerHealthUrl}/livez`)).status).to.equal(200);
    const answered = await slow;
    expect(answered.status, JSON.stringify(answered.body)).to.equal(200);
    expect(await exited).to.equal(0);
    const { usage, reservations } = await books(stack, answered.requestId!);
    expect(usage.status).to.equal('succeeded');
    expect(reservations.filter((r) => r.status === 'settled')).to.have.length(1);
    await stack.startWorker();
  });
});
