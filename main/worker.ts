/** `npm run worker`: a worker process alone (scale-out). Stores come from the env, else a local `npm start`. */
import { loadConfig } from '../config/env';
import { startRuntime } from './runtime';
import { attachToStores } from '../stack/attach';
import { runUntilSignal } from './process-lifecycle';

runUntilSignal('worker', async () => {
  const config = loadConfig();
  const runtime = await startRuntime({ config, ...attachToStores(config), api: false, worker: true });
  console.log(`[worker] polling task queue '${config.temporalTaskQueue}'`);
  return runtime;
});
