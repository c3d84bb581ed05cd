import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../core/paths';
import { SANDBOX_CALL_TIMEOUT_MS } from '../../worker/sandbox-options';
import { startTestGateway } from '../support/gateway';

const PRELOAD = path.join(repoRoot, 'dist', 'worker', 'sandbox-preload.js');

interface InWorkerThread {
  /** Threads of the process while a script runs in a `vm` context: with no timeout, the worker's, another. */
  threads: { none: number; workers: number; other: number; viaFunction: number };
  /** Whether the SDK's sandbox installed its promise hook (the stack-trace query's source). */
  promiseHook: boolean;
}

/** What a worker thread (where the SDK runs workflows) of a process started with `nodeFlags` sees. */
function inWorkerThread(nodeFlags: string[], env: NodeJS.ProcessEnv = {}): InWorkerThread {
  const thread = `
    const vm = require('node:vm');
    const fs = require('node:fs');
    const context = vm.createContext({ threads: () => fs.readdirSync('/proc/self/task').length });
    const script = new vm.Script('threads()');
    const threads = {
      none: script.runInContext(context),
      workers: script.runInContext(context, { timeout: ${SANDBOX_CALL_TIMEOUT_MS} }),
      other: script.runInContext(context, { timeout: 5000 }),
      viaFunction: vm.runInContext('threads()', context, { timeout: ${SANDBOX_CALL_TIMEOUT_MS} }),
    };
    const { globalHandlers } = require(${JSON.stringify(require.resolve('@temporalio/worker/lib/workflow/vm-shared'))});
    globalHandlers.install();
    require('node:worker_threads').parentPort.postMessage({ threads, promiseHook: globalHandlers.promiseHookInstalled });`;
  const main = `new (require('node:worker_threads').Worker)(${JSON.stringify(thread)}, { eval: true }).on('message', (m) => { console.log(JSON.stringify(m)); process.exit(0); });`;
  return JSON.parse(execFileSync(process.execPath, [...nodeFlags, '-e', main], { encoding: 'utf8', env: { ...process.env, ...env } })) as InWorkerThread;
}

describe('the workflow sandbox with worker/sandbox-preload.ts preloaded', () => {
  it('runs calls with the worker\'s timeout without a watchdog thread, in worker threads too; other timeouts keep theirs', () => {
    const { threads } = inWorkerThread(['--require', PRELOAD]);
    expect(threads.workers).to.equal(threads.none);
    expect(threads.viaFunction).to.equal(threads.none);
    expect(threads.other).to.equal(threads.none + 1);
  });

  it('captures no stack per promise, unless GATEWAY_WORKFLOW_STACK_TRACES=true', () => {
    expect(inWorkerThread(['--require', PRELOAD]).promiseHook).to.equal(false);
    expect(inWorkerThread(['--require', PRELOAD], { GATEWAY_WORKFLOW_STACK_TRACES: 'true' }).promiseHook).to.equal(true);
  });

  it('asks the SDK, from the gateway\'s worker, for the timeout it recognizes', async function () {
    this.timeout(60_000);
    const gateway = await startTestGateway();
    try {
      expect(gateway.runtime.worker!.options.isolateExecutionTimeoutMs).to.equal(SANDBOX_CALL_TIMEOUT_MS);
    } finally {
      await gateway.stop();
    }
  });

  it('leaves the SDK as shipped where it is not preloaded: a watchdog per call, stack traces on', () => {
    const { threads, promiseHook } = inWorkerThread([]);
    expect(threads.workers).to.equal(threads.none + 1);
    expect(threads.other).to.equal(threads.none + 1);
    expect(promiseHook).to.equal(true);
  });
});
