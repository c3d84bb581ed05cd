import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../core/paths';
import { SANDBOX_CALL_TIMEOUT_MS } from '../../worker/sandbox-calls';
import { startTestGateway } from '../support/gateway';

const PRELOAD = path.join(repoRoot, 'dist', 'worker', 'sandbox-calls.js');

/**
 * In a worker thread (where the SDK runs workflows), the threads the process has while a script runs in a
 * `vm` context: with no timeout, with the worker's timeout, with another timeout (Node's watchdog is a thread
 * of its own for the length of the call), and through `vm.runInContext` with the worker's timeout.
 */
function threadsDuringCalls(nodeFlags: string[]): { none: number; workers: number; other: number; viaFunction: number } {
  const thread = `
    const vm = require('node:vm');
    const fs = require('node:fs');
    const context = vm.createContext({ threads: () => fs.readdirSync('/proc/self/task').length });
    const script = new vm.Script('threads()');
    require('node:worker_threads').parentPort.postMessage({
      none: script.runInContext(context),
      workers: script.runInContext(context, { timeout: ${SANDBOX_CALL_TIMEOUT_MS} }),
      other: script.runInContext(context, { timeout: 5000 }),
      viaFunction: vm.runInContext('threads()', context, { timeout: ${SANDBOX_CALL_TIMEOUT_MS} }),
    });`;
  const main = `new (require('node:worker_threads').Worker)(${JSON.stringify(thread)}, { eval: true }).on('message', (m) => { console.log(JSON.stringify(m)); process.exit(0); });`;
  return JSON.parse(execFileSync(process.execPath, [...nodeFlags, '-e', main], { encoding: 'utf8' })) as ReturnType<typeof threadsDuringCalls>;
}

describe('calls into the workflow sandbox (worker/sandbox-calls.ts preloaded)', () => {
  it('run with the worker\'s timeout without a watchdog thread, in worker threads too; other timeouts keep theirs', () => {
    const counts = threadsDuringCalls(['--require', PRELOAD]);
    expect(counts.workers).to.equal(counts.none);
    expect(counts.viaFunction).to.equal(counts.none);
    expect(counts.other).to.equal(counts.none + 1);
  });

  it('are what the gateway\'s worker asks the SDK for', async function () {
    this.timeout(60_000);
    const gateway = await startTestGateway();
    try {
      expect(gateway.runtime.worker!.options.isolateExecutionTimeoutMs).to.equal(SANDBOX_CALL_TIMEOUT_MS);
    } finally {
      await gateway.stop();
    }
  });

  it('keep the watchdog, as an ordinary timeout, where the file is not preloaded', () => {
    const counts = threadsDuringCalls([]);
    expect(counts.workers).to.equal(counts.none + 1);
    expect(counts.other).to.equal(counts.none + 1);
  });
});
