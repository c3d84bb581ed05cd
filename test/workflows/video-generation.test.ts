import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getBalance } from '../../domain/ledger';
import { readAcceptedSubmissions } from '../../simulator';
import { waitFor } from '../support/notification-sinks';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectPlayableMp4, postVideo, waitForJob } from '../support/video-jobs';

/** Simulated jobs take 8 s upstream, long enough to restart a process in the middle. */
const SLOW_VIDEOS = { simulated: { headers: { 'x-sim-video-ms': '8000' } } };

describe('videoGenerationWorkflow across restarts', function () {
  this.timeout(300_000);
  const running: TestGateway[] = [];
  const start = async (opts: Parameters<typeof startTestGateway>[0]) => {
    const gateway = await startTestGateway(opts);
    running.push(gateway);
    return gateway;
  };
  afterEach(async () => {
    await Promise.all(running.splice(0).map((g) => g.stop()));
  });

  it('finishes a job charged once when its worker stops mid-job and a new worker takes over', async () => {
    const taskQueue = `video-restart-${Math.random().toString(36).slice(2, 10)}`;
    const api = await start({ api: true, worker: false, taskQueue });
    const firstWorker = await start({ api: false, worker: true, taskQueue, providerOverrides: SLOW_VIDEOS });
    const tenant = await api.newTenant({ credits: 100 });

    const res = await postVideo(tenant, { model: 'sim-video', prompt: 'survives restarts', duration: 2, resolution: '360p' });
    expect(res.status).to.equal(200);
    const { id } = (await res.json()) as { id: string };
    await waitForJob(tenant.fetch, id, { until: (j) => j.status === 'processing' });

    await firstWorker.stop();
    // With no worker nothing moves: the job waits where it was.
    await new Promise((r) => setTimeout(r, 1500));
    const { job: paused } = await waitForJob(tenant.fetch, id, { until: () => true });
    expect(paused.status).to.equal('processing');
    const pausedAgain = (await (await tenant.fetch(`/v1/videos/generations/${id}`)).json()) as { progress: number };
    expect(pausedAgain.progress).to.equal(paused.progress);

    await start({ api: false, worker: true, taskQueue, providerOverrides: SLOW_VIDEOS });
    const { job } = await waitForJob(tenant.fetch, id);
    expect(job.status).to.equal('succeeded');
    await expectPlayableMp4(job.url!);

    const db = api.runtime.db;
    const rows = await db('credit_ledger').where({ workspace_id: tenant.workspaceId }).whereNot({ kind: 'topup' }).orderBy('id');
    expect(rows.map((r) => `${r.reservation_id}:${r.kind}:${r.amount_micro}`)).to.deep.equal([
      `${id}:0:reserve:-1000000`, `${id}:0:release:1000000`, `${id}:0:settle:-1000000`,
    ]);
    expect(await db('usage_records').where({ request_id: id })).to.have.length(1);
    expect((await getBalance(db, tenant.workspaceId)).totalMicro).to.equal(99_000_000);
  });

  it('submits a job once when its worker stops mid-submission: the retry gets the provider\'s first job back', async () => {
    const taskQueue = `video-submit-${Math.random().toString(36).slice(2, 10)}`;
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sim-video-'));
    const provider = { simulated: { headers: { 'x-sim-video-ms': '2000', 'x-sim-state-dir': stateDir } } };
    const api = await start({ api: true, worker: false, taskQueue });
    const firstWorker = await start({ api: false, worker: true, taskQueue, providerOverrides: provider });
    const tenant = await api.newTenant({ credits: 100 });

    // The provider takes the job at once but answers the first submission only after 60 s.
    const res = await postVideo(tenant, { model: 'sim-video', prompt: 'submitted once', duration: 2, resolution: '360p' },
      { 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': '60000', 'x-simulate-fail-times': '1' });
    const { id } = (await res.json()) as { id: string };
    await waitFor('the provider to take the job', () => readAcceptedSubmissions(stateDir).length === 1);
    await firstWorker.stop();

    await start({ api: false, worker: true, taskQueue, providerOverrides: provider });
    const { job } = await waitForJob(tenant.fetch, id);
    expect(job.status).to.equal('succeeded');
    await expectPlayableMp4(job.url!);
    const accepted = readAcceptedSubmissions(stateDir);
    expect(accepted.map((s) => s.key)).to.deep.equal([`${id}:0`]);
    const row = await api.runtime.db('video_jobs').where({ id }).first('operation_id', 'operation_hop');
    expect(row).to.deep.equal({ operation_id: accepted[0].operationId, operation_hop: 0 });
    expect(await api.runtime.db('credit_ledger').where({ workspace_id: tenant.workspaceId, kind: 'settle' })).to.have.length(1);
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it('keeps a job going while the API restarts, and the new API serves its result', async () => {
    const taskQueue = `video-api-restart-${Math.random().toString(36).slice(2, 10)}`;
    await start({ api: false, worker: true, taskQueue, providerOverrides: SLOW_VIDEOS });
    const firstApi = await start({ api: true, worker: false, taskQueue });
    const tenant = await firstApi.newTenant({ credits: 100 });
    const res = await postVideo(tenant, { model: 'sim-video', prompt: 'api goes away', duration: 2, resolution: '360p' });
    const { id } = (await res.json()) as { id: string };
    await waitForJob(tenant.fetch, id, { until: (j) => j.status === 'processing' });
    await firstApi.stop();

    const secondApi = await start({ api: true, worker: false, taskQueue });
    const fetchFromNew = (path: string) => fetch(`${secondApi.url}${path}`, { headers: { authorization: `Bearer ${tenant.key}` } });
    const { job, seen } = await waitForJob(fetchFromNew, id);
    expect(job.status).to.equal('succeeded');
    expect(seen[0].status).to.equal('processing');
    await expectPlayableMp4(job.url!);
    expect(await secondApi.runtime.db('credit_ledger').where({ workspace_id: tenant.workspaceId, kind: 'settle' })).to.have.length(1);
  });
});
