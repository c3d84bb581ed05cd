/**
 * The table of provider hosts: which wire family each catalog `provider` id speaks, its default base URL
 * and the env vars holding its credentials (`<PREFIX>_API_KEY`, `<PREFIX>_BASE_URL`). A new
 * OpenAI-compatible host is one row here plus its models in catalog/models.
 */
import { UpstreamError } from '../core/errors';
import { createAnthropicProvider } from './anthropic';
import { azureOpenAIOptionsFromEnv, createAzureOpenAIProvider } from './azure-openai';
import { bedrockOptionsFromEnv, createBedrockProvider } from './bedrock';
import { createBflProvider } from './bfl';
import { createCohereProvider } from './cohere';
import { DeploymentsFileError, Deployments, loadDeploymentsFile, type DeploymentsFile, type ModelDeployments } from './deployments';
import { createElevenLabsProvider } from './elevenlabs';
import { createGoogleProvider } from './google';
import { createLumaProvider } from './luma';
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from './openai-compatible';
import { createRunwayProvider } from './runway';
import { createStabilityProvider } from './stability';
import { createStabilityAudioProvider } from './stability-audio';
import type { Provider, ProviderOptions } from './types';
import { createVertexProvider, vertexOptionsFromEnv } from './vertex';
import { createVoyageProvider } from './voyage';

type Family = 'openai-compatible' | 'azure-openai' | 'bedrock' | 'vertex' | 'anthropic' | 'google' | 'cohere' | 'voyage' | 'bfl' | 'stability' | 'runway' | 'luma' | 'elevenlabs' | 'stability-audio' | 'simulated';

interface HostEntry {
  id: string;
  family: Family;
  envPrefix: string;
  defaultBaseUrl: string;
  /** Family-specific switches (e.g. OpenAI reasoning models take `max_completion_tokens`). */
  extra?: Partial<OpenAICompatibleOptions> & { nativeBatches?: boolean };
  /** Options a family reads from variables of its own (Azure's endpoint, API version and Entra ID; Bedrock's region and AWS credentials; Vertex's project and key). */
  fromEnv?: (env: NodeJS.ProcessEnv) => Record<string, unknown>;
}

const isReasoningModel = (model: string) => /^(o\d|gpt-5)/.test(model);

export const PROVIDER_HOSTS: HostEntry[] = [
  { id: 'openai', family: 'openai-compatible', envPrefix: 'OPENAI', defaultBaseUrl: 'https://api.openai.com/v1',
    extra: { useMaxCompletionTokens: isReasoningModel, plainJsonTranscription: (m) => m.startsWith('gpt-4o'), nativeChoices: true, nativeBatches: true } },
  // Groq, DeepSeek and OpenRouter take only n = 1: the gateway makes one call per choice there.
  { id: 'groq', family: 'openai-compatible', envPrefix: 'GROQ', defaultBaseUrl: 'https://api.groq.com/openai/v1' },
  { id: 'together', family: 'openai-compatible', envPrefix: 'TOGETHER', defaultBaseUrl: 'https://api.together.xyz/v1', extra: { nativeChoices: true } },
  { id: 'fireworks', family: 'openai-compatible', envPrefix: 'FIREWORKS', defaultBaseUrl: 'https://api.fireworks.ai/inference/v1', extra: { nativeChoices: true } },
  { id: 'deepseek', family: 'openai-compatible', envPrefix: 'DEEPSEEK', defaultBaseUrl: 'https://api.deepseek.com/v1' },
  { id: 'mistral', family: 'openai-compatible', envPrefix: 'MISTRAL', defaultBaseUrl: 'https://api.mistral.ai/v1', extra: { nativeChoices: true } },
  { id: 'xai', family: 'openai-compatible', envPrefix: 'XAI', defaultBaseUrl: 'https://api.x.ai/v1', extra: { nativeChoices: true } },
  { id: 'openrouter', family: 'openai-compatible', envPrefix: 'OPENROUTER', defaultBaseUrl: 'https://openrouter.ai/api/v1' },
  // Azure OpenAI: AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY or Entra ID (providers/azure-openai).
  { id: 'azure', family: 'azure-openai', envPrefix: 'AZURE_OPENAI', defaultBaseUrl: '', fromEnv: azureOpenAIOptionsFromEnv },
  // AWS Bedrock: BEDROCK_REGION, AWS keys, a role or the default credential chain (providers/bedrock).
  { id: 'bedrock', family: 'bedrock', envPrefix: 'BEDROCK', defaultBaseUrl: '', fromEnv: bedrockOptionsFromEnv },
  // Google Vertex AI: a service account's key, VERTEX_PROJECT, VERTEX_LOCATION (providers/vertex).
  { id: 'vertex', family: 'vertex', envPrefix: 'VERTEX', defaultBaseUrl: '', fromEnv: vertexOptionsFromEnv },
  { id: 'anthropic', family: 'anthropic', envPrefix: 'ANTHROPIC', defaultBaseUrl: 'https://api.anthropic.com', extra: { nativeBatches: true } },
  { id: 'google', family: 'google', envPrefix: 'GOOGLE', defaultBaseUrl: 'https://generativelanguage.googleapis.com' },
  { id: 'cohere', family: 'cohere', envPrefix: 'COHERE', defaultBaseUrl: 'https://api.cohere.com' },
  { id: 'voyage', family: 'voyage', envPrefix: 'VOYAGE', defaultBaseUrl: 'https://api.voyageai.com' },
  { id: 'bfl', family: 'bfl', envPrefix: 'BFL', defaultBaseUrl: 'https://api.bfl.ai' },
  { id: 'stability', family: 'stability', envPrefix: 'STABILITY', defaultBaseUrl: 'https://api.stability.ai' },
  { id: 'stability-audio', family: 'stability-audio', envPrefix: 'STABILITY_AUDIO', defaultBaseUrl: 'https://api.stability.ai' },
  { id: 'runway', family: 'runway', envPrefix: 'RUNWAY', defaultBaseUrl: 'https://api.dev.runwayml.com' },
  { id: 'luma', family: 'luma', envPrefix: 'LUMA', defaultBaseUrl: 'https://api.lumalabs.ai' },
  { id: 'elevenlabs', family: 'elevenlabs', envPrefix: 'ELEVENLABS', defaultBaseUrl: 'https://api.elevenlabs.io' },
  { id: 'simulated', family: 'simulated', envPrefix: 'SIMULATED', defaultBaseUrl: 'simulated://local' },
];

/** Wire families whose hosts authenticate with one API key (`<PREFIX>_API_KEY`). */
const KEYED_FAMILIES: ReadonlySet<Family> = new Set(['openai-compatible', 'anthropic', 'google', 'cohere', 'voyage', 'bfl', 'stability', 'runway', 'luma', 'elevenlabs', 'stability-audio']);

export type ProviderFactory = (options: ProviderOptions & Record<string, unknown>) => Provider;

/** Wire families that ship with this module; `simulated` is plugged in by the wiring (main/providers.ts). */
const FACTORIES: Record<Exclude<Family, 'simulated'>, ProviderFactory> = {
  'openai-compatible': createOpenAICompatibleProvider,
  'azure-openai': createAzureOpenAIProvider,
  bedrock: createBedrockProvider,
  vertex: createVertexProvider,
  anthropic: createAnthropicProvider,
  google: createGoogleProvider,
  cohere: createCohereProvider,
  voyage: createVoyageProvider,
  bfl: createBflProvider,
  stability: createStabilityProvider,
  'stability-audio': createStabilityAudioProvider,
  runway: createRunwayProvider,
  luma: createLumaProvider,
  elevenlabs: createElevenLabsProvider,
};

export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();
  /** How each host was built, so the same host can be built again with another key (a workspace's own). */
  private readonly builders = new Map<string, (apiKey: string) => Provider>();
  /** Providers this view serves with a workspace's own key (overriding). */
  private readonly ownKeyProviders = new Set<string>();

  /** `deployments`: the models the operator's deployments file spreads over several deployments (null: none). */
  constructor(providers: Provider[], readonly deployments: Deployments<Provider> | null = null, builders: Map<string, (apiKey: string) => Provider> = new Map()) {
    for (const p of providers) this.providers.set(p.id, p);
    for (const [id, build] of builders) this.builders.set(id, build);
  }

  /**
   * Builds every host from the environment (`<PREFIX>_API_KEY`, `<PREFIX>_BASE_URL`, `<PREFIX>_TIMEOUT_MS`),
   * and the deployments of GATEWAY_DEPLOYMENTS_FILE when set (a mistake in it throws a DeploymentsFileError).
   */
  static fromEnv(
    env: NodeJS.ProcessEnv = process.env,
    overrides: Record<string, Partial<ProviderOptions>> = {},
    plugins: Partial<Record<Family, ProviderFactory>> = {},
  ): ProviderRegistry {
    const factories: Partial<Record<Family, ProviderFactory>> = { ...FACTORIES, ...plugins };
    const builders = new Map<string, (apiKey: string) => Provider>();
    const hosts = PROVIDER_HOSTS.flatMap((host) => {
      const factory = factories[host.family];
      if (!factory) return [];
      const options = {
        id: host.id,
        baseUrl: env[`${host.envPrefix}_BASE_URL`] || host.defaultBaseUrl,
        apiKey: env[`${host.envPrefix}_API_KEY`] || undefined,
        timeoutMs: env[`${host.envPrefix}_TIMEOUT_MS`] ? Number(env[`${host.envPrefix}_TIMEOUT_MS`]) : undefined,
        ...(host.extra ?? {}),
        ...(host.fromEnv?.(env) ?? {}),
        ...(overrides[host.id] ?? {}),
      };
      // Only hosts that authenticate with one bearer-like key can take a workspace's key (not Azure's Entra ID, not the simulator).
      if (KEYED_FAMILIES.has(host.family)) builders.set(host.id, (apiKey) => factory({ ...options, apiKey } as ProviderOptions & Record<string, unknown>));
      return [factory(options as ProviderOptions & Record<string, unknown>)];
    });
    const file = env.GATEWAY_DEPLOYMENTS_FILE ? loadDeploymentsFile(env.GATEWAY_DEPLOYMENTS_FILE, env, new Set(PROVIDER_HOSTS.map((h) => h.id))) : null;
    return new ProviderRegistry(hosts, file ? buildDeployments(file, env, hosts, factories) : null, builders);
  }

  /**
   * The deployments of a catalog model when the operator declared several; null: its one implicit deployment.
   * A workspace that brings its own key for the model's provider (`providerId`) is served with that key, never
   * on the platform's deployments.
   */
  deploymentsOf(modelId: string, providerId?: string): ModelDeployments<Provider> | null {
    if (providerId && this.ownKeyProviders.has(providerId)) return null;
    return this.deployments?.of(modelId) ?? null;
  }

  /** Whether a host can be built with a key of the caller's own (a workspace's provider key). */
  takesOwnKey(providerId: string): boolean {
    return this.builders.has(providerId);
  }

  /**
   * The host `providerId` built anew with `apiKey` in place of the platform's key (same base URL, timeouts and
   * switches). A fresh instance each time: callers cache it per key, and never share it between workspaces.
   */
  withKey(providerId: string, apiKey: string): Provider {
    const build = this.builders.get(providerId);
    if (!build) throw new UpstreamError(`Provider '${providerId}' does not take a key of a workspace's own`, { kind: 'not_configured', provider: providerId });
    return build(apiKey);
  }

  /** This registry with `provider` in place of the host of the same id (a workspace's view: its own keys over the platform's). */
  overriding(provider: Provider): ProviderRegistry {
    const view = new ProviderRegistry([...this.providers.values()], this.deployments, this.builders);
    view.providers.set(provider.id, provider);
    for (const id of this.ownKeyProviders) view.ownKeyProviders.add(id);
    view.ownKeyProviders.add(provider.id);
    return view;
  }

  isConfigured(providerId: string): boolean {
    return this.providers.get(providerId)?.configured ?? false;
  }

  /** Whether the gateway's own credentials serve a model of `providerId`: the provider's, or deployments of `modelId`. */
  serves(providerId: string, modelId?: string): boolean {
    return this.isConfigured(providerId) || Boolean(modelId && this.deploymentsOf(modelId));
  }

  /** The provider a catalog record names; a `not_configured` UpstreamError when unknown or without credentials. */
  get(providerId: string): Provider {
    const provider = this.providers.get(providerId);
    if (!provider) throw new UpstreamError(`No provider '${providerId}' is known to this gateway`, { kind: 'not_configured', provider: providerId });
    if (!provider.configured) throw new UpstreamError(`Provider '${providerId}' has no credentials configured on this gateway`, { kind: 'not_configured', provider: providerId });
    return provider;
  }
}

/**
 * The provider instances of a deployments file, each built by its host's wire family with the file's
 * address and options and the credentials read from the variables it names (never the host's own
 * variables: an instance is configured by the file alone). A deployment naming a host directly shares
 * the host's provider as the environment configured it.
 */
function buildDeployments(file: DeploymentsFile, env: NodeJS.ProcessEnv, hosts: Provider[], factories: Partial<Record<Family, ProviderFactory>>): Deployments<Provider> {
  const instances = new Map<string, Provider>();
  for (const spec of file.providers.values()) {
    const host = PROVIDER_HOSTS.find((h) => h.id === spec.host)!;
    const factory = factories[host.family];
    if (!factory) throw new DeploymentsFileError(file.path, spec.line, `the host '${spec.host}' has no provider on this gateway`);
    const credentials = Object.fromEntries(Object.entries(spec.credentials).map(([option, variable]) => [option, env[variable]]));
    const provider = factory({
      id: host.id, baseUrl: spec.baseUrl || host.defaultBaseUrl, timeoutMs: spec.timeoutMs, ...(host.extra ?? {}), ...spec.options, ...credentials,
    } as ProviderOptions & Record<string, unknown>);
    if (!provider.configured) throw new DeploymentsFileError(file.path, spec.line, `the provider '${spec.name}' is not configured (its ${host.family} credentials or address are missing)`);
    instances.set(spec.name, provider);
  }
  const models = new Map<string, ModelDeployments<Provider>>();
  for (const m of file.models.values()) {
    models.set(m.model, {
      model: m.model, line: m.line, routing: m.routing, cooldownMs: m.cooldownMs,
      deployments: m.deployments.map((d) => {
        const provider = instances.get(d.provider) ?? hosts.find((h) => h.id === d.provider);
        if (!provider) throw new DeploymentsFileError(file.path, d.line, `the host '${d.provider}' has no provider on this gateway`);
        if (!provider.configured) throw new DeploymentsFileError(file.path, d.line, `the host '${d.provider}' has no credentials in the environment`);
        return { name: d.name, provider, upstreamModel: d.upstreamModel, weight: d.weight, rpm: d.rpm, tpm: d.tpm };
      }),
    });
  }
  return new Deployments(file.path, models);
}
