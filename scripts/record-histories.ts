/**
 * `npm run record-histories [-- --release <name>] [-- --only <file>,<file>]`: records one run of every workflow
 * type (and of each model endpoint's request workflow, and each way a batch is served) on a real stack, and
 * writes each history as JSON into test/workflows/histories/<release>/ (default: package.json's version).
 * Run it at each release and commit the files: test/workflows/replay.test.ts replays every recorded history
 * against the current workflow code, so a change to a workflow's commands that running histories would not
 * replay fails CI (use `patched()`). `--only` records the named files alone, leaving the release's others as
 * they were recorded (a behaviour added behind `patched()` within a release gets its own file beside them).
 *
 * The runs use the simulated provider, and a fake OpenAI host for the batch served on the provider's own
 * batch API; the payloads are encrypted with the recording key in test/workflows/histories/recording-codec-key
 * (a key for these recordings only, never a deployment's).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { repoRoot } from '../core/paths';
import { cycleOf } from '../domain/billing-cycle';
import { signalAutoTopUp } from '../activities/auto-topup-signal';
import { autoTopUpStatusQuery } from '../workflows/auto-topup';
import { autoTopUpWorkflowId, batchWorkflowId, budgetWatcherId, pingWorkflowId, requestWorkflowId, SCHEDULED_TASK_QUEUE } from '../workflows/contracts';
import { startTestGateway, type Tenant } from '../test/support/gateway';
import { stopSharedStack } from '../test/support/stack';
import { waitFor, WebhookSink } from '../test/support/notification-sinks';
import { waitForJob } from '../test/support/video-jobs';
import { FakeUpstream } from '../test/support/fake-upstream';
import { chatCompletion, FakeOpenAIBatches } from '../test/support/fake-openai-batches';
import { addNativeBatchModel } from '../test/support/native-batches';

const HISTORIES_DIR = path.join(repoRoot, 'test', 'workflows', 'histories');
/** The recording gateway's task queue (the automatic top-up is signalled on it as settlement would). */
const TASK_QUEUE = 'record-histories';
const RECORDING_KEY_FILE = path.join(HISTORIES_DIR, 'recording-codec-key');

/** A copy of gpt-4o-mini whose batches go to the fake OpenAI host's Batch API. */
const NATIVE_BATCH_MODEL = 'gpt-4o-mini-recorded-native';

/** One recording: the file it is written to and how to get a finished (or, for a watcher, running) run of it. */
interface Recording {
  file: string;
  /** Null: the current code never starts this run; its histories are the ones recorded by earlier code. */
  drive: ((ctx: { tenant: Tenant; client: Client; taskQueue: string }) => Promise<string>) | null;
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
  // 0.1.0's batchWorkflow.json and batchLineWorkflow.json are runs begun before lines were served inline (each
  // line its own child run): batches now serve their lines inside their run, and never start a line's run.
  { file: 'batchWorkflow.json', drive: null },
  { file: 'batchLineWorkflow.json', drive: null },
  // A batch of three chat lines served inside its run (`batch-lines-inline`; its model has no provider batches).
  { file: 'batchWorkflow.inline.json', drive: async ({ tenant }) => batchWorkflowId(await recordedBatch(tenant, 'sim-chat')) },
  // A batch of three lines served on the provider's own batch API (`batch-provider-native`): held, submitted, polled, settled.
  { file: 'batchWorkflow.native.json', drive: async ({ tenant }) => batchWorkflowId(await recordedBatch(tenant, NATIVE_BATCH_MODEL)) },
];

/** A batch of three chat lines of `model`, made and waited for until it completed; its id. */
async function recordedBatch(tenant: Tenant, model: string): Promise<string> {
  const lines = ['a', 'b', 'c'].map((id) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model, max_tokens: 16, messages: [{ role: 'user', content: `line ${id}` }] } }));
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([`${lines.join('\n')}\n`], { type: 'application/jsonl' }), 'batch.jsonl');
  const file = (await (await tenant.fetch('/v1/files', { method: 'POST', body: form })).json()) as { id: string };
  const res = await tenant.fetch('/v1/batches', { method: 'POST', headers: json, body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }) });
  if (res.status !== 200) throw new Error(`POST /v1/batches answered ${res.status}`);
  const { id } = (await res.json()) as { id: string };
  const done = await waitFor('the batch to end', async () => {
    const batch = (await (await tenant.fetch(`/v1/batches/${id}`)).json()) as { status: string; request_counts: { completed: number } };
    return ['completed', 'failed', 'cancelled', 'expired'].includes(batch.status) ? batch : null;
  }, 60_000);
  if (done.status !== 'completed' || done.request_counts.completed !== 3) throw new Error(`the batch of ${model} ended ${JSON.stringify(done)}`);
  return id;
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--release');
  const release = at >= 0 ? process.argv[at + 1] : (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  if (!release || !/^[\w.-]+$/.test(release)) throw new Error('--release takes a name of letters, digits, dots, dashes and underscores');
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? '').split(',').filter(Boolean) : null;
  const unknown = (only ?? []).filter((file) => !RECORDINGS.some((r) => r.file === file));
  if (only && (only.length === 0 || unknown.length > 0)) throw new Error(`--only takes recordings' files, comma-separated: ${RECORDINGS.map((r) => r.file).join(', ')}`);
  const outDir = path.join(HISTORIES_DIR, release);
  const webhook = new WebhookSink();
  await webhook.start();
  // OpenAI's host, for the batch served on its Batch API: each line answered with an echo of its prompt.
  const openai = new FakeUpstream();
  await openai.start();
  new FakeOpenAIBatches(openai, { answer: (line) => ({ status_code: 200, body: chatCompletion(`echo: ${line.body.messages[0].content}`, { prompt_tokens: 12, completion_tokens: 4 }) }) });
  const gateway = await startTestGateway({
    taskQueue: TASK_QUEUE,
    env: {
      TEMPORAL_CODEC_KEYS: fs.readFileSync(RECORDING_KEY_FILE, 'utf8').trim(), ALLOW_PRIVATE_WEBHOOKS: 'true', LOG_LEVEL: 'warn',
      OPENAI_BASE_URL: `${openai.url}/v1`, OPENAI_API_KEY: 'sk-recording',
    },
    providerOverrides: { simulated: { headers: { 'x-sim-video-ms': '1500' } } },
  });
  try {
    await addNativeBatchModel(gateway, 'gpt-4o-mini', NATIVE_BATCH_MODEL);
    const client = gateway.runtime.temporal.client;
    const tenant = await gateway.newTenant({ credits: 1000 });
    const alert = await tenant.fetch('/v1/budget/alerts', {
      method: 'POST', headers: json, body: JSON.stringify({ threshold_type: 'credits', threshold: 0.000001, channels: { webhook: { url: `${webhook.url}/hooks/recorded` } } }),
    });
    if (alert.status !== 201) throw new Error(`the budget alert answered ${alert.status}`);
    fs.mkdirSync(outDir, { recursive: true });
    for (const recording of RECORDINGS) {
      if (only && !only.includes(recording.file)) continue;
      if (!recording.drive) {
        console.log(`[record-histories] ${recording.file}: kept as recorded (the current code never starts this run)`);
        continue;
      }
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
    await openai.stop();
    await stopSharedStack();
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`[record-histories] ${err instanceof Error ? err.stack : err}`);
  process.exit(1);
});
