/**
 * Rolling upgrades: every history recorded from an earlier release (test/workflows/histories/<release>/, written
 * by `npm run record-histories`) is replayed against the workflow code as it is now, in the same bundle the
 * workers run. A change to the commands a workflow issues that a run started on that release would meet (an
 * activity added, removed or reordered, a timer changed) fails here with the SDK's non-determinism error,
 * unless it is behind `patched()`. Every workflow type the worker runs must have a recorded history.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { parseCodecKeys } from '../../config/env';
import { repoRoot } from '../../core/paths';
import { AesGcmPayloadCodec, gatewayDataConverter } from '../../infra/payload-codec';
import { workflowBundle } from '../../worker/workflow-bundle';
import { resultSinks } from '../../worker/result-sinks';
import { ResultBroker } from '../../activities/result-broker';
import type { ReplayWorkerOptions } from '@temporalio/worker';
import * as workflows from '../../workflows';
import { installQuietRuntime } from '../support/workflow-harness';

const HISTORIES_DIR = path.join(repoRoot, 'test', 'workflows', 'histories');
const KEY_FILE = path.join(HISTORIES_DIR, 'recording-codec-key');

interface Recorded {
  release: string;
  file: string;
  workflowType: string;
  history: temporal.api.history.v1.History;
}

/** Release names in version order (0.10.0 after 0.9.0). */
const byRelease = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/** The workers' bundle, data converter (with the recording key) and sinks (never called in replay). */
async function replayOptions(replayName: string): Promise<ReplayWorkerOptions> {
  const codec = new AesGcmPayloadCodec(parseCodecKeys(fs.readFileSync(KEY_FILE, 'utf8').trim(), KEY_FILE));
  return { workflowBundle: await workflowBundle('default'), dataConverter: gatewayDataConverter(codec), sinks: resultSinks(new ResultBroker()), replayName };
}

function recordedHistories(): Recorded[] {
  const releases = fs.readdirSync(HISTORIES_DIR, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort(byRelease);
  return releases.flatMap((release) => fs.readdirSync(path.join(HISTORIES_DIR, release)).filter((f) => f.endsWith('.json')).sort().map((file) => {
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, release, file), 'utf8')));
    const workflowType = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
    return { release, file, workflowType, history };
  }));
}

describe('replaying recorded workflow histories (rolling upgrades)', function () {
  this.timeout(180_000);
  const recorded = recordedHistories();
  before(() => installQuietRuntime());

  it('has a recorded history of every workflow type the worker runs, in the latest release', () => {
    const latest = recorded.map((r) => r.release).sort(byRelease).at(-1);
    const types = new Set(recorded.filter((r) => r.release === latest).map((r) => r.workflowType));
    const exported = Object.keys(workflows).filter((name) => typeof (workflows as Record<string, unknown>)[name] === 'function');
    expect(exported).to.include('modelRequestWorkflow');
    expect(exported.filter((name) => !types.has(name)), 'workflow types without a recorded history (npm run record-histories)').to.deep.equal([]);
    expect([...types].filter((name) => !exported.includes(name)), 'histories of workflow types the worker no longer runs').to.deep.equal([]);
  });

  it('replays every recorded history against the current workflow code without non-determinism', async () => {
    expect(recorded.length).to.be.greaterThan(0);
    const results = Worker.runReplayHistories(
      await replayOptions('recorded-histories'),
      recorded.map((r) => ({ workflowId: `${r.release}/${r.file}`, history: r.history })),
    );
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of results) {
      replayed++;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.name}: ${result.error.message}`);
    }
    expect(failures).to.deep.equal([]);
    expect(replayed).to.equal(recorded.length);
  });

  it('has a batch history of each way a batch is served: lines as child runs, inline, on the provider\'s batch API', () => {
    // What each batch history went through: its patch markers and the activities it scheduled.
    const walked = (r: Recorded) => {
      const patches: string[] = [];
      const activities = new Set<string>();
      for (const event of r.history.events ?? []) {
        const marker = event.markerRecordedEventAttributes;
        if (marker?.markerName === 'core_patch') patches.push(JSON.parse(Buffer.from(marker.details!['patch-data'].payloads![0].data!).toString('utf8')).id);
        const scheduled = event.activityTaskScheduledEventAttributes?.activityType?.name;
        if (scheduled) activities.add(scheduled);
        if (event.startChildWorkflowExecutionInitiatedEventAttributes) activities.add(`child ${event.startChildWorkflowExecutionInitiatedEventAttributes.workflowType!.name}`);
      }
      return { patches, childLines: activities.has('child batchLineWorkflow'), native: activities.has('submitNativeBatch') };
    };
    const batches = Object.fromEntries(recorded.filter((r) => r.workflowType === 'batchWorkflow').map((r) => [`${r.release}/${r.file}`, walked(r)]));
    expect(batches).to.deep.include({
      '0.1.0/batchWorkflow.json': { patches: [], childLines: true, native: false },
      '0.1.0/batchWorkflow.inline.json': { patches: ['batch-lines-inline', 'batch-provider-native'], childLines: false, native: false },
      '0.1.0/batchWorkflow.native.json': { patches: ['batch-lines-inline', 'batch-provider-native'], childLines: false, native: true },
    });
  });

  it('fails on a history whose commands the code would not issue', async () => {
    // The recorded chat request with its one hop marker renamed: the code records `serveHop` there.
    const chat = recorded.find((r) => r.file === 'modelRequestWorkflow.chat.json')!;
    const altered = temporal.api.history.v1.History.fromObject(JSON.parse(JSON.stringify(temporal.api.history.v1.History.toObject(chat.history, { longs: String, enums: String, bytes: String }))));
    const marker = altered.events!.find((e) => e.markerRecordedEventAttributes)!.markerRecordedEventAttributes!;
    const data = marker.details!.data!.payloads![0];
    data.data = Buffer.from(Buffer.from(data.data!).toString('utf8').replace(/"activity_type":"[^"]+"/, '"activity_type":"chargeTwice"'));
    const results = Worker.runReplayHistories(
      await replayOptions('altered-history'),
      [{ workflowId: 'altered', history: altered }],
    );
    const errors: string[] = [];
    for await (const result of results) if (result.error) errors.push(`${result.error.name}: ${result.error.message}`);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(/Nondeterminism|DeterminismViolation/i);
  });
});
