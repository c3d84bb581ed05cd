import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestGateway, type TestGateway, type Tenant } from '../support/gateway';
import { setFallbackChain } from '../../domain/workspaces';
import { sampleValue, scrapeMetrics } from '../support/metrics';
import { waitFor } from '../support/notification-sinks';

describe('GET /metrics', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  const token = 'operator-token-for-tests-0123456789';
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: { OPERATOR_TOKEN: token } });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(() => gateway?.stop());

  const scrape = () => scrapeMetrics(gateway, { authorization: `Bearer ${token}` });
  const chat = (model: string) => tenant.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }] }).withResponse();

  it('needs the operator token when one is set', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789-abcdef', `Bearer ${tenant.key}`]) {
      const response = await fetch(`${gateway.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(response.status).to.equal(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).to.equal('invalid_operator_token');
    }
  });

  it('counts a request, its latency and its credits', async () => {
    const labels = { endpoint: '/v1/chat/completions', method: 'POST', status: '200' };
    const before = await scrape();
    const { response } = await chat('sim-chat');
    const after = await scrape();
    expect(after).to.match(/^# TYPE gateway_http_requests_total counter$/m);
    expect(sampleValue(after, 'gateway_http_requests_total', labels) - sampleValue(before, 'gateway_http_requests_total', labels)).to.equal(1);
    const count = (text: string) => sampleValue(text, 'gateway_http_request_duration_seconds_count', { endpoint: '/v1/chat/completions' });
    expect(count(after) - count(before)).to.equal(1);
    const credits = (text: string) => sampleValue(text, 'gateway_credits_charged_total', { endpoint: 'chat.completions', model: 'sim-chat' });
    expect(credits(after) - credits(before)).to.be.closeTo(Number(response.headers.get('x-credits-used')), 1e-9);
    expect(Number(response.headers.get('x-credits-used'))).to.be.greaterThan(0);
    // A request answered before its run's last step keeps its place until the run ended (api/http/admission.ts).
    await waitFor('the run to end', async () => sampleValue(await scrape(), 'gateway_in_flight_requests') === 0, 10_000);
    expect(sampleValue(after, 'process_resident_memory_bytes')).to.be.greaterThan(0);
  });

  it("counts a streamed request's charge once: the stream's own settlement, not the workflow's repeat of it", async () => {
    const credits = (text: string) => sampleValue(text, 'gateway_credits_charged_total', { endpoint: 'chat.completions', model: 'sim-chat' });
    const before = await scrape();
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }], stream: true, stream_options: { include_usage: true } }),
    });
    const text = await res.text();
    const reported = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((c) => c.usage)!.usage;
    expect(reported.credits_used).to.be.greaterThan(0);
    // The workflow settles again after the stream ended (finding it settled): wait for it before reading.
    await gateway.runtime.temporal.client.workflow.getHandle(`req-${res.headers.get('x-request-id')}`).result();
    expect(credits(await scrape()) - credits(before)).to.be.closeTo(reported.credits_used, 1e-9);
  });

  it('counts a fallback and the upstream failures that caused it, by provider and model', async () => {
    await setFallbackChain(gateway.runtime.db, { workspaceId: tenant.workspaceId, sourceModel: 'sim-chat-fail-500', chain: ['sim-chat-mini'], actor: 'test', modalityOf: async () => 'chat' });
    const errors = { provider: 'simulated', model: 'sim-chat-fail-500', kind: 'server_error' };
    const fallbacks = { endpoint: '/v1/chat/completions', depth: '1' };
    const before = await scrape();
    const { response } = await chat('sim-chat-fail-500');
    expect(response.headers.get('x-fallback-depth')).to.equal('1');
    const after = await scrape();
    expect(sampleValue(after, 'gateway_fallback_responses_total', fallbacks) - sampleValue(before, 'gateway_fallback_responses_total', fallbacks)).to.equal(1);
    // Every attempt on the failing model (it is retried before the chain moves on).
    expect(sampleValue(after, 'gateway_upstream_errors_total', errors) - sampleValue(before, 'gateway_upstream_errors_total', errors)).to.be.greaterThanOrEqual(1);
  });

  it("appends the Temporal SDK's own metrics", async function () {
    // The SDK core serves them only when this process's runtime was installed by the gateway.
    if (!gateway.runtime.temporal.metricsUrl) this.skip();
    // A run of its own: the worker counts its completion after the answer went out, so it is awaited.
    await chat('sim-chat');
    const text = await waitFor('the SDK to count a completed workflow', async () => {
      const scraped = await scrape();
      return /^temporal_workflow_completed\{/m.test(scraped) ? scraped : null;
    }, 15_000).catch(() => scrape());
    expect(text).to.match(/^temporal_workflow_completed\{/m);
  });
});

describe('a worker alone: metrics on WORKER_METRICS_PORT', function () {
  this.timeout(120_000);
  let worker: TestGateway;
  const token = 'operator-token-for-tests-0123456789';
  before(async function () {
    this.timeout(180_000);
    worker = await startTestGateway({ api: false, worker: true, env: { WORKER_METRICS_PORT: '0', OPERATOR_TOKEN: token } });
  });
  after(() => worker?.stop());

  it('serves the same text on its own port, to the operator token only', async () => {
    const url = worker.runtime.workerMetricsUrl!;
    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(url)).status).to.equal(401);
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/plain/);
    expect(await response.text()).to.match(/^# TYPE gateway_upstream_errors_total counter$/m);
  });
});

describe('GET /metrics without OPERATOR_TOKEN', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let dataDir: string;
  before(async function () {
    this.timeout(180_000);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-metrics-'));
    gateway = await startTestGateway({ worker: false, env: { OPERATOR_TOKEN: undefined, GATEWAY_DATA_DIR: dataDir, WORKER_METRICS_PORT: undefined } });
  });
  after(async () => {
    await gateway?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('needs the generated development token (the one `npm start` prints)', async () => {
    const generated = (await readFile(path.join(dataDir, 'operator-token'), 'utf8')).trim();
    expect(generated).to.have.length.greaterThan(30);
    expect(gateway.runtime.operatorToken).to.equal(generated);
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789-abcdef-0123456789']) {
      const response = await fetch(`${gateway.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(response.status).to.equal(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).to.equal('invalid_operator_token');
    }
    const response = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${generated}` } });
    expect(response.status).to.equal(200);
    expect(await response.text()).to.match(/^# TYPE gateway_http_requests_total counter$/m);
  });

  it("a worker alone's metrics port needs the same generated token", async () => {
    const worker = await startTestGateway({ api: false, env: { OPERATOR_TOKEN: undefined, GATEWAY_DATA_DIR: dataDir, WORKER_METRICS_PORT: '0' } });
    try {
      const url = worker.runtime.workerMetricsUrl!;
      expect((await fetch(url)).status).to.equal(401);
      expect((await fetch(url, { headers: { authorization: `Bearer ${gateway.runtime.operatorToken}` } })).status).to.equal(200);
    } finally {
      await worker.stop();
    }
  });
});
