/**
 * The provider registry of a running gateway: every wire family from the environment, plus the offline
 * `simulated` provider (kept out of providers/ so real code never depends on the fake).
 */
import { ProviderRegistry } from '../providers/registry';
import type { ProviderOptions } from '../providers/types';
import { createSimulatedProvider, simulatedTuningFromEnv } from '../simulator';

export function providersFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Record<string, Partial<ProviderOptions>> = {}): ProviderRegistry {
  const tuning = simulatedTuningFromEnv(env);
  return ProviderRegistry.fromEnv(env, overrides, { simulated: (options) => createSimulatedProvider(options, tuning) });
}
