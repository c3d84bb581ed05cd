/**
 * `npm run api-worker`: an API and a worker in one process, on stores given in the env (else a local
 * `npm start`'s). The shape `npm start` runs, for deployments that scale out whole gateways: each request's
 * run starts eagerly on the worker beside the API that took it, and its first hop begins while it starts.
 */
import { loadConfig } from '../config/env';
import { startRuntime } from './runtime';
import { attachToStores } from '../stack/attach';
import { runUntilSignal } from './process-lifecycle';

runUntilSignal('api-worker', async () => {
  const config = loadConfig();
  const runtime = await startRuntime({ config, ...attachToStores(config), api: true, worker: true });
  console.log(`[api-worker] listening on ${runtime.http!.url}/v1, polling task queue '${config.temporalTaskQueue}'`);
  return runtime;
});
