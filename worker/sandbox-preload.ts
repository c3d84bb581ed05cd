/**
 * What a gateway process preloads into every one of its threads (`node --require
 * dist/worker/sandbox-preload.js`: scripts/bootstrap.js GATEWAY_NODE_FLAGS, the image's NODE_OPTIONS), so that
 * it reaches the Temporal SDK's workflow thread too. Two costs of the workflow sandbox go, both measured in
 * bench/results/HISTORY.md ("The workflow sandbox"):
 *
 * - A watchdog thread per call. The SDK runs every call into a workflow's V8 context (create, each
 *   activation, microtasks, dispose: about seven per request) with `vm`'s `timeout` option, its
 *   `isolateExecutionTimeout`, to fail a workflow stuck in a loop; Node enforces it by creating and joining a
 *   thread on every call (nodejs/node#47739), ~0.7 ms a call in a gateway process, about half of the
 *   workflow thread's time. The worker asks for SANDBOX_CALL_TIMEOUT_MS (worker/worker.ts), and this preload
 *   drops that one value from `vm` calls, and no other. What is given up: a workflow caught in an endless
 *   loop blocks its worker's workflow thread instead of failing its task after five seconds.
 * - A stack trace per promise. To answer the stack-trace query (the Web UI's "Stack Trace" tab), the SDK
 *   hooks every promise created in workflow code and captures a source-mapped stack for it. Here the hook is
 *   not installed (the SDK's own mode where promise hooks are unavailable): the query then answers that
 *   stack traces are not enabled on this worker. GATEWAY_WORKFLOW_STACK_TRACES=true keeps them.
 *
 * Without the preload (tests, a process started by hand) the SDK behaves as shipped: a five-second watchdog on
 * each call, stack traces on.
 */
import Module from 'node:module';
import vm from 'node:vm';
import { SANDBOX_CALL_TIMEOUT_MS } from './sandbox-options';

type RunOptions = vm.RunningScriptOptions | string | undefined;

function withoutWatchdog(options: RunOptions): RunOptions {
  if (typeof options !== 'object' || options.timeout !== SANDBOX_CALL_TIMEOUT_MS) return options;
  const { timeout: _dropped, ...rest } = options;
  return rest;
}

const patched = Symbol.for('gateway.sandboxPreload');
const marked = vm as unknown as Record<symbol, boolean>;

function callsWithoutWatchdog(): void {
  const runInContext = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (this: vm.Script, context: vm.Context, options?: vm.RunningScriptOptions) {
    return runInContext.call(this, context, withoutWatchdog(options) as vm.RunningScriptOptions | undefined);
  };
  const runCode = vm.runInContext;
  vm.runInContext = function (code: string, context: vm.Context, options?: RunOptions) {
    return runCode(code, context, withoutWatchdog(options));
  } as typeof vm.runInContext;
}

interface SandboxGlobals {
  GlobalHandlers?: { prototype: { setPromiseHook?: () => void } };
}

/**
 * When the SDK's sandbox module (`@temporalio/worker/lib/workflow/vm-shared`) loads, its promise hook is made a
 * no-op before any workflow runs. Its shape is checked: another SDK version without it keeps its hook.
 */
function noPromiseStacks(): void {
  const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
  const load = loader._load;
  loader._load = function (request: string, parent: unknown, isMain: boolean) {
    const loaded = load.call(this, request, parent, isMain) as SandboxGlobals | undefined;
    if (/(^|[\\/])vm-shared(\.js)?$/.test(request) && typeof loaded?.GlobalHandlers?.prototype?.setPromiseHook === 'function') {
      loaded.GlobalHandlers.prototype.setPromiseHook = function () { /* stack traces off: see above */ };
      loader._load = load;
    }
    return loaded;
  };
}

if (!marked[patched]) {
  marked[patched] = true;
  callsWithoutWatchdog();
  if (process.env.GATEWAY_WORKFLOW_STACK_TRACES !== 'true') noPromiseStacks();
}
