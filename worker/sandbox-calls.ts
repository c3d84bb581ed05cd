/**
 * Calls into the workflow sandbox without Node's per-call watchdog thread. Preloaded into every thread of a
 * gateway process (`node --require dist/worker/sandbox-calls.js`: scripts/bootstrap.js GATEWAY_NODE_FLAGS,
 * the image's NODE_OPTIONS), so it reaches the SDK's workflow thread too.
 *
 * The Temporal SDK runs every call into a workflow's V8 context (create, each activation, microtasks,
 * dispose: about seven per request) with `vm`'s `timeout` option, its `isolateExecutionTimeout`, to fail a
 * workflow stuck in a loop. Node enforces that option by creating and joining a watchdog thread on every
 * call (nodejs/node#47739). In a gateway process that cost ~0.7 ms a call, ~4.7 ms of the workflow
 * thread per request: about half of that thread's time, and ~2 ms of every request's latency at
 * concurrency 1 (bench/README.md, "The workflow sandbox's watchdog").
 *
 * The worker asks for SANDBOX_CALL_TIMEOUT_MS (worker/worker.ts); this preload drops that one value from
 * `vm` calls, and no other (importing this file for the constant drops it in the importing thread too,
 * which makes no such calls of its own). Without the preload (tests, a process started by hand) it stays
 * what it is: a five-second watchdog on each call. What is given up with it: a workflow caught in an endless loop blocks
 * its worker's workflow thread instead of failing its task after five seconds.
 */
import vm from 'node:vm';

/** The isolate execution timeout the worker asks for: a watchdog of ~5 s, or none where this file is preloaded. */
export const SANDBOX_CALL_TIMEOUT_MS = 5_003;

type RunOptions = vm.RunningScriptOptions | string | undefined;

function withoutWatchdog(options: RunOptions): RunOptions {
  if (typeof options !== 'object' || options.timeout !== SANDBOX_CALL_TIMEOUT_MS) return options;
  const { timeout: _dropped, ...rest } = options;
  return rest;
}

const patched = Symbol.for('gateway.sandboxCallsWithoutWatchdog');
const marked = vm as unknown as Record<symbol, boolean>;
if (!marked[patched]) {
  marked[patched] = true;
  const runInContext = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (this: vm.Script, context: vm.Context, options?: vm.RunningScriptOptions) {
    return runInContext.call(this, context, withoutWatchdog(options) as vm.RunningScriptOptions | undefined);
  };
  const runCode = vm.runInContext;
  vm.runInContext = function (code: string, context: vm.Context, options?: RunOptions) {
    return runCode(code, context, withoutWatchdog(options));
  } as typeof vm.runInContext;
}
