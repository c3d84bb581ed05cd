/**
 * A real gateway for end-to-end tests: API + worker in this process against the shared test stack,
 * listening on a free port. Helpers create workspaces and keys the way the admin CLI does.
 */
import OpenAI from 'openai';
import { loadConfig } from '../../config/env';
import { createApiKey, createWorkspace, type ApiKeyQuotas, type Role } from '../../domain/workspaces';
import { startRuntime, type Runtime } from '../../main/runtime';
import { providersFromEnv } from '../../main/providers';
import type { ProviderOptions } from '../../providers/types';
import type { StorageConfig } from '../../infra/storage';
import { getSharedStack } from './stack';

export interface TestGateway {
  runtime: Runtime;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** A workspace with `credits` and a key on it, plus an official OpenAI client using that key. */
  newTenant(opts?: { credits?: number; quotas?: ApiKeyQuotas; role?: Role; planId?: string }): Promise<Tenant>;
  stop(): Promise<void>;
}

export interface Tenant {
  workspaceId: string;
  keyId: string;
  key: string;
  client: OpenAI;
  /** fetch against the gateway with this tenant's key. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

export async function startTestGateway(opts: {
  env?: NodeJS.ProcessEnv; taskQueue?: string; api?: boolean; worker?: boolean;
  /** Per-provider options over the env's (e.g. the simulated provider's `x-sim-*` knobs as headers). */
  providerOverrides?: Record<string, Partial<ProviderOptions>>;
  /** Object storage other than the shared stack's. */
  s3?: StorageConfig;
} = {}): Promise<TestGateway> {
  const stack = await getSharedStack();
  const env = { ...process.env, ...(opts.env ?? {}) };
  const config = { ...loadConfig(env), temporalTaskQueue: opts.taskQueue ?? `test-${Math.random().toString(36).slice(2, 10)}` };
  const runtime = await startRuntime({
    config, databaseUrl: stack.databaseUrl, temporalAddress: stack.temporalAddress, s3: opts.s3 ?? stack.s3,
    api: opts.api ?? true, worker: opts.worker ?? true, port: 0, providers: providersFromEnv(env, opts.providerOverrides),
  });
  const url = runtime.http?.url ?? '';
  return {
    runtime,
    url,
    async newTenant(t = {}) {
      const ws = await createWorkspace(runtime.db, { name: 'test', credits: t.credits ?? 100, planId: t.planId ?? null, actor: 'test' });
      const key = await createApiKey(runtime.db, { workspaceId: ws.id, name: 'test', role: t.role ?? 'owner', quotas: t.quotas, actor: 'test' });
      const client = new OpenAI({ apiKey: key.key, baseURL: `${url}/v1`, maxRetries: 0, timeout: 60_000 });
      return {
        workspaceId: ws.id,
        keyId: key.id,
        key: key.key,
        client,
        fetch: (path, init = {}) => fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${key.key}`, ...(init.headers ?? {}) } }),
      };
    },
    stop: () => runtime.stop(),
  };
}
