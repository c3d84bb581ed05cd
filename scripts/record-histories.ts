/**
 * `npm run record-histories [-- --release <name>]`: records one run of every workflow type (and of each model
 * endpoint's request workflow) on a real stack, and writes each history as JSON into
 * test/workflows/histories/<release>/ (default: package.json's version). Run it at each release and commit the
 * files: test/workflows/replay.test.ts replays every recorded history against the current workflow code, so a
 * change to a workflow's commands that running histories would not replay fails CI (use `patched()`).
 *
 * The runs use the simulated provider only, and the payloads are encrypted with the recording key in
 * test/workflows/histories/recording-codec-key (a key for these recordings only, never a deployment's).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { repoRoot } from '../core/paths';
import { cycleOf } from '../domain/billing-cycle';
import { signalAutoTopUp } from '../activities/auto-topup-signal';
import { autoTopUpStatusQuery } from '../workflows/auto-topup';
import { autoTopUpWorkflowId, batchLineWorkflowId, batchWorkflowId, budgetWatcherId, pingWorkflowId, requestWorkflowId, SCHEDULED_TASK_QUEUE } from '../workflows/contracts';
import { startTestGateway, type Tenant } from '../test/support/gateway';
import { stopSharedStack } from '../test/support/stack';
import { waitFor, WebhookSink } from '../test/support/notification-sinks';
import { waitForJob } from '../test/support/video-jobs';

const HISTORIES_DIR = path.join(repoRoot, 'test', 'workflows', 'histories');
/** The recording gateway's task queue (the automatic top-up is signalled on it as settlement would). */
const TASK_QUEUE = 'record-histories';
const RECORDING_KEY_FILE = path.join(HISTORIES_DIR, 'recording-codec-key');

/** One recording: the file it is written to and how to get a finished (or, for a watcher, running) run of it. */
interface Recording {
  file: string;
  drive(ctx: { tenant: Tenant; client: Client; taskQueue: string }): Promise<string>;
  /** A long-lived workflow recorded as it stands (waiting), not closed. */
  open?: boolean;
}

const json = { 'content-type': 'application/json' };

/** Sends a model request and returns its workflow id (from the x-request-id it answered with). */
async function request(tenant: Tenant, urlPath: string, body: Record<string, unknown>): Promise<string> {
  const res = await tenant.fetch(urlPath, { method: 'POST', headers: json, body: JSON.stringify(body) });
  await res.arrayBuffer(); // a stream: read to its end
  if (res.status !== 200) throw new Error(`${urlPath} answered ${res.status}`);
  return requestWorkflowId(res.headers.get('x-request-id')!);
}

/** The workflow id of the one run of `type` (the runs here start one of each). */
async function onlyRunOf(client: Client, type: string): Promise<string> {
  return waitFor(`a ${type} run`, async () => {
    for await (const run of client.workflow.list({ query: `WorkflowType = '${type}'` })) return run.workflowId;
    return null;
  }, 60_000);
}

const RECORDINGS: Recording[] = [
  { file: 'pingWorkflow.json', drive: async ({ tenant }) => {
    const res = await tenant.fetch('/v1/ping');
    if (res.status !== 200) throw new Error(`ping answered ${res.status}`);
    return pingWorkflowId(res.headers.get('x-request-id')!);
  } },
  { file: 'modelRequestWorkflow.chat.json', drive: ({ tenant }) => request(tenant, '/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }] }) },
  { file: 'modelRequestWorkflow.chat-fallback.json', drive: async ({ tenant }) => {
    const res = await tenant.fetch('/v1/fallback-chains/sim-chat-fail-500', { method: 'PUT', headers: json, body: JSON.stringify({ chain: ['sim-chat'] }) });
    if (res.status !== 200) throw new Error(`setting the fallback chain answered ${res.status}`);
    return request(tenant, '/v1/chat/completions', { model: 'sim-chat-fail-500', messages: [{ role: 'user', content: 'Fall back' }] });
  } },
  { file: 'modelRequestWorkflow.embeddings.json', drive: ({ tenant }) => request(tenant, '/v1/embeddings', { model: 'sim-embed', input: 'hello' }) },
  { file: 'modelRequestWorkflow.images.json', drive: ({ tenant }) => request(tenant, '/v1/images/generations', { model: 'sim-image', prompt: 'a kite', size: '256x256' }) },
  { file: 'modelRequestWorkflow.speech.json', drive: ({ tenant }) => request(tenant, '/v1/audio/speech', { model: 'sim-tts', input: 'Hello there', voice: 'alloy' }) },
  { file: 'chatStreamWorkflow.json', drive: ({ tenant }) => request(tenant, '/v1/chat/completions', { model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'Stream it' }] }) },
  { file: 'imageStreamWorkflow.json', drive: ({ tenant }) => request(tenant, '/v1/images/generations', { model: 'sim-image', prompt: 'a streamed kite', size: '256x256', stream: true }) },
  { file: 'videoGenerationWorkflow.json', drive: async ({ tenant, client }) => {
    const res = await tenant.fetch('/v1/videos/generations', { method: 'POST', headers: json, body: JSON.stringify({ model: 'sim-video', prompt: 'a kite over the sea', duration: 2, resolution: '360p' }) });
    const job = (await res.json()) as { id: string };
    if (res.status >= 300) throw new Error(`the video job answered ${res.status}`);
    await waitForJob(tenant.fetch, job.id);
    return onlyRunOf(client, 'videoGenerationWorkflow');
  } },
  { file: 'monthlyCreditGrantsWorkflow.json', drive: async ({ client }) => {
    const workflowId = `record-monthly-grants-${Date.now()}`;
    await client.workflow.execute('monthlyCreditGrantsWorkflow', { taskQueue: SCHEDULED_TASK_QUEUE, workflowId, args: [{ cycle: cycleOf(new Date()) }] });
    return workflowId;
  } },
  { file: 'holdSweeperWorkflow.json', drive: async ({ client }) => {
    const workflowId = `record-hold-sweeper-${Date.now()}`;
    await client.workflow.execute('holdSweeperWorkflow', { taskQueue: SCHEDULED_TASK_QUEUE, workflowId, args: [{ minAgeSeconds: 0 }] });
    return workflowId;
  } },
  // The budget alert (created before the requests above) was crossed by them: its watcher evaluated and started a delivery.
  { file: 'budgetAlertDeliveryWorkflow.json', drive: async ({ client }) => {
    const workflowId = await onlyRunOf(client, 'budgetAlertDeliveryWorkflow');
    await client.workflow.getHandle(workflowId).result();
    return workflowId;
  } },
  { file: 'budgetWatcherWorkflow.json', drive: async ({ tenant }) => budgetWatcherId(tenant.workspaceId), open: true },
  // Signalled as a settlement below the threshold does; without a payment processor its check charges nothing.
  { file: 'autoTopUpWorkflow.json', open: true, drive: async ({ tenant, client, taskQueue }) => {
    await signalAutoTopUp(client, { taskQueue, workspaceId: tenant.workspaceId });
    const handle = client.workflow.getHandle(autoTopUpWorkflowId(tenant.workspaceId));
    await waitFor('the automatic top-up check', async () => (await handle.query(autoTopUpStatusQuery)).checks === 1 || null, 60_000);
    return handle.workflowId;
  } },
  // A batch of three chat lines (its run), then the run of its first line.
  { file: 'batchWorkflow.json', drive: async ({ tenant }) => batchWorkflowId(await recordedBatch(tenant)) },
  { file: 'batchLineWorkflow.json', drive: async ({ tenant }) => batchLineWorkflowId(await recordedBatch(tenant), 0) },
];

let batchMade: Promise<string> | null = null;

/** The one batch the recordings run (made once, waited for until it completed). */
function recordedBatch(tenant: Tenant): Promise<string> {
  batchMade ??= (async () => {
    const lines = ['a', 'b', 'c'].map((id) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: `line ${id}` }] } }));
    const form = new FormData();
    form.set('purpose', 'batch');
    form.set('file', new Blob([`${lines.join('\n')}\n`], { type: 'application/jsonl' }), 'batch.jsonl');
    const file = (await (await tenant.fetch('/v1/files', { method: 'POST', body: form })).json()) as { id: string };
    const res = await tenant.fetch('/v1/batches', { method: 'POST', headers: json, body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }) });
    if (res.status !== 200) throw new Error(`POST /v1/batches answered ${res.status}`);
    const { id } = (await res.json()) as { id: string };
    await waitFor('the batch to complete', async () => ((await (await tenant.fetch(`/v1/batches/${id}`)).json()) as { status: string }).status === 'completed' || null, 60_000);
    return id;
  })();
  return batchMade;
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--release');
  const release = at >= 0 ? process.argv[at + 1] : (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  if (!release || !/^[\w.-]+$/.test(release)) throw new Error('--release takes a name of letters, digits, dots, dashes and underscores');
  const outDir = path.join(HISTORIES_DIR, release);
  const webhook = new WebhookSink();
  await webhook.start();
  const gateway = await startTestGateway({
    taskQueue: TASK_QUEUE,
    env: { TEMPORAL_CODEC_KEYS: fs.readFileSync(RECORDING_KEY_FILE, 'utf8').trim(), ALLOW_PRIVATE_WEBHOOKS: 'true', LOG_LEVEL: 'warn' },
    providerOverrides: { simulated: { headers: { 'x-sim-video-ms': '1500' } } },
  });
  try {
    const client = gateway.runtime.temporal.client;
    const tenant = await gateway.newTenant({ credits: 1000 });
    const alert = await tenant.fetch('/v1/budget/alerts', {
      method: 'POST', headers: json, body: JSON.stringify({ threshold_type: 'credits', threshold: 0.000001, channels: { webhook: { url: `${webhook.url}/hooks/recorded` } } }),
    });
    if (alert.status !== 201) throw new Error(`the budget alert answered ${alert.status}`);
    fs.mkdirSync(outDir, { recursive: true });
    for (const recording of RECORDINGS) {
      const workflowId = await recording.drive({ tenant, client, taskQueue: TASK_QUEUE });
      const handle = client.workflow.getHandle(workflowId);
      // Closed runs are recorded whole (a watcher is recorded as it stands, waiting for spend).
      if (!recording.open) await handle.result().catch(() => undefined);
      const history = await handle.fetchHistory();
      // As protobufjs' plain object (enum names, 64-bit numbers and bytes as strings), which `History.fromObject` reads back.
      const plain = temporal.api.history.v1.History.toObject(temporal.api.history.v1.History.fromObject(history), { longs: String, enums: String, bytes: String });
      fs.writeFileSync(path.join(outDir, recording.file), `${JSON.stringify(plain, null, 1)}\n`);
      console.log(`[record-histories] ${path.relative(repoRoot, path.join(outDir, recording.file))}: ${history.events?.length ?? 0} events`);
    }
  } finally {
    await gateway.stop();
    await webhook.stop();
    await stopSharedStack();
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`[record-histories] ${err instanceof Error ? err.stack : err}`);
  process.exit(1);
});
