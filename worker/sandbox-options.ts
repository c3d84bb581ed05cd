/**
 * The isolate execution timeout the gateway's workers ask the SDK for (worker/worker.ts): an ordinary
 * ~5-second watchdog on each call into the workflow sandbox, or none where worker/sandbox-preload.ts is
 * preloaded, which recognizes this one value.
 */
export const SANDBOX_CALL_TIMEOUT_MS = 5_003;
