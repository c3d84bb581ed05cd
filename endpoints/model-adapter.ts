/**
 * The provider adapter serving a catalog model; a provider without one for the modality cannot serve it (503).
 *
 * A model the operator spread over several deployments (providers/deployments.ts) gets an adapter that
 * routes each call: the deployments in their routing order, skipping those cooling down or over their
 * rpm/tpm, and moving on when one answers 429, 5xx or times out (which cools it down for every process).
 * Only when none is left does the call fail, with an error the workspace's fallback chain moves on from:
 * deployments are the same model, fallbacks are other models.
 */
import type { ModelRecord } from '../catalog/types';
import { UpstreamError } from '../core/errors';
import { log } from '../core/log';
import { deploymentOrder, type Deployment, type ModelDeployments } from '../providers/deployments';
import type { ProviderRegistry } from '../providers/registry';
import type { Provider } from '../providers/types';

export type AdapterModality = 'chat' | 'embedding' | 'image' | 'speech' | 'transcription' | 'video' | 'music' | 'moderation';
export type AdapterOf<M extends AdapterModality> = ReturnType<NonNullable<Provider[M]>>;

/** Where the deployment that answered is written (its name; null for a model's one implicit deployment). */
export interface ServedBy {
  deployment: string | null;
}

export interface AdapterEnv {
  providers: Pick<ProviderRegistry, 'get' | 'deploymentsOf' | 'deployments'>;
  served?: ServedBy;
}

export function modelAdapter<M extends AdapterModality>(env: AdapterEnv, record: ModelRecord, modality: M): AdapterOf<M> {
  // A video is polled where it was submitted: its model keeps one deployment (providers/deployments.ts).
  const declared = modality === 'video' ? null : env.providers.deploymentsOf(record.slug, record.provider);
  if (declared) return routedAdapter(env, record, modality, declared);
  const provider = env.providers.get(record.provider);
  const adapter = bindAdapter(provider, record, modality, record.upstreamId);
  if (!adapter) throw noAdapter(record.provider, record, modality);
  return adapter;
}

function bindAdapter<M extends AdapterModality>(provider: Provider, record: ModelRecord, modality: M, upstreamModel: string): AdapterOf<M> | null {
  const bind = provider[modality] as ((upstreamModel: string) => AdapterOf<M>) | undefined;
  return bind ? bind.call(provider, upstreamModel) : null;
}

function noAdapter(providerId: string, record: ModelRecord, modality: AdapterModality): UpstreamError {
  return new UpstreamError(`Provider '${providerId}' has no ${modality} adapter on this gateway, so '${record.slug}' cannot be served.`, { kind: 'not_configured', provider: providerId });
}

/** Failures that say the deployment, not the request, is the trouble: it cools down and the next one is tried. */
function coolsDown(err: unknown): err is UpstreamError {
  return err instanceof UpstreamError && (err.kind === 'rate_limited' || err.kind === 'server_error' || err.kind === 'timeout' || err.kind === 'network');
}

type AnyAdapter = Record<string, unknown>;
type Bound = Deployment<Provider> & { adapter: AnyAdapter };

function routedAdapter<M extends AdapterModality>(env: AdapterEnv, record: ModelRecord, modality: M, declared: ModelDeployments<Provider>): AdapterOf<M> {
  const router = env.providers.deployments!;
  const bound: Bound[] = declared.deployments.flatMap((d) => {
    const adapter = bindAdapter(d.provider, record, modality, d.upstreamModel ?? record.upstreamId);
    return adapter ? [{ ...d, adapter: adapter as unknown as AnyAdapter }] : [];
  });
  if (bound.length === 0) throw noAdapter(declared.deployments[0].provider.id, record, modality);

  /** Calls the first deployment able to take the call, in routing order; `call` resolves once it has answered. */
  async function route<T>(method: string, call: (adapter: AnyAdapter) => Promise<T>): Promise<{ value: T; deployment: Bound }> {
    const able = bound.filter((b) => typeof b.adapter[method] === 'function');
    const order = deploymentOrder(able, declared.routing, (name) => router.load(name));
    const coolingUntil = await router.state.coolingUntil(order.map((d) => d.name));
    let failure: UpstreamError | null = null;
    let soonest = Infinity;
    for (const [i, d] of order.entries()) {
      if (coolingUntil[i] > Date.now()) {
        soonest = Math.min(soonest, coolingUntil[i]);
        continue;
      }
      if (d.tpm !== undefined && (await router.state.tokensUsed(d.name)) >= d.tpm) continue;
      if (d.rpm !== undefined && (await router.state.countRequest(d.name)) > d.rpm) continue;
      const end = router.begin(d.name);
      const started = Date.now();
      try {
        const value = await call(d.adapter);
        end(Date.now() - started);
        if (env.served) env.served.deployment = d.name;
        return { value, deployment: d };
      } catch (err) {
        end(null);
        if (!coolsDown(err)) throw err;
        const ms = Math.max(declared.cooldownMs, err.retryAfterMs ?? 0);
        await router.state.coolDown(d.name, ms);
        log.warn({ model: record.slug, deployment: d.name, kind: err.kind, upstreamStatus: err.upstreamStatus, cooldownMs: ms }, 'a deployment failed: it cools down and the next one is tried');
        failure = err;
      }
    }
    // The last deployment's own failure when one was tried; else every one is cooling down or at its limit.
    if (failure) throw failure;
    throw new UpstreamError(`Every deployment of '${record.slug}' is cooling down or at its rate limit.`, {
      kind: 'rate_limited', provider: record.provider, code: 'deployments_unavailable',
      retryAfterMs: Number.isFinite(soonest) ? Math.max(1000, soonest - Date.now()) : null,
    });
  }

  const countTokens = (d: Bound, usage: unknown) => {
    const u = usage as { inputTokens?: number; outputTokens?: number } | undefined;
    const tokens = (u?.inputTokens ?? 0) + (u?.outputTokens ?? 0);
    if (d.tpm !== undefined && tokens > 0) void router.state.addTokens(d.name, tokens).catch(() => undefined);
  };

  const routed: AnyAdapter = {};
  for (const key of new Set(bound.flatMap((b) => adapterKeys(b.adapter)))) {
    const values = bound.map((b) => b.adapter[key]);
    if (key === 'doStream') {
      routed[key] = (...args: unknown[]) => routedStream(route, countTokens, args);
    } else if (/^do[A-Z]/.test(key) && values.some((v) => typeof v === 'function')) {
      routed[key] = async (...args: unknown[]) => {
        const { value, deployment } = await route(key, (adapter) => (adapter[key] as (...a: unknown[]) => Promise<unknown>).apply(adapter, args));
        countTokens(deployment, (value as { usage?: unknown } | null)?.usage);
        return value;
      };
    } else if (values.every((v) => typeof v === 'boolean')) {
      // A switch such as `nativeChoices` holds for the routed adapter only when every deployment has it.
      routed[key] = values.every(Boolean);
    }
  }
  return routed as AdapterOf<M>;
}

/** An adapter's members: its own and its class's (adapters are object literals or class instances); its calls are its `do…` methods. */
function adapterKeys(adapter: AnyAdapter): string[] {
  const keys = new Set<string>();
  for (let o: object | null = adapter; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const key of Object.getOwnPropertyNames(o)) if (key !== 'constructor') keys.add(key);
  }
  return [...keys];
}

/**
 * A routed stream: deployments are tried until one yields its first part (a failure before it moves on,
 * as for any call); after that the stream is that deployment's, to its end.
 */
async function* routedStream(
  route: <T>(method: string, call: (adapter: AnyAdapter) => Promise<T>) => Promise<{ value: T; deployment: Bound }>,
  countTokens: (d: Bound, usage: unknown) => void,
  args: unknown[],
): AsyncGenerator<unknown> {
  const { value: { iterator, first }, deployment } = await route('doStream', async (adapter) => {
    const iterator = (adapter.doStream as (...a: unknown[]) => AsyncIterable<unknown>).apply(adapter, args)[Symbol.asyncIterator]();
    return { iterator, first: await iterator.next() };
  });
  try {
    for (let step = first; !step.done; step = await iterator.next()) {
      const part = step.value as { type?: string; usage?: unknown };
      if (part.type === 'finish') countTokens(deployment, part.usage);
      yield part;
    }
  } finally {
    await iterator.return?.();
  }
}
