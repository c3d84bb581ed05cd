/** `npm run api`: an API process alone (scale-out). Stores come from the env, else a local `npm start`. */
import { loadConfig } from '../config/env';
import { startRuntime } from './runtime';
import { attachToStores } from '../stack/attach';
import { runUntilSignal } from './process-lifecycle';

runUntilSignal('api', async () => {
  const config = loadConfig();
  const stores = attachToStores(config);
  // Each API process also runs a worker on its own task queue for the streams it holds (see workflows/chat).
  const runtime = await startRuntime({ config, ...stores, api: true, worker: false });
  console.log(`[api] listening on ${runtime.http!.url}/v1`);
  return runtime;
});
