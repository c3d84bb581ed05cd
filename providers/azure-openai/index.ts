/**
 * The `azure-openai` wire family: Azure OpenAI deployments. Azure speaks OpenAI's wire format, so the models
 * are the openai-compatible family's; what differs is the address (`{endpoint}/openai/deployments/{deployment}`
 * plus `?api-version=`), the auth (`api-key: <key>`, or `Authorization: Bearer <Entra ID token>`) and
 * Azure's content filter. The catalog record's `upstreamId` is the deployment's name.
 */
import fs from 'node:fs';
import { UpstreamError } from '../../core/errors';
import { bearerAuth, Connection, defineProvider, keyHeaderAuth } from '../connection';
import { OpenAICompatibleChatModel } from '../openai-compatible/chat';
import { OpenAICompatibleEmbeddingModel } from '../openai-compatible/embedding';
import { OpenAICompatibleImageModel } from '../openai-compatible/image';
import { OpenAICompatibleSpeechModel } from '../openai-compatible/speech';
import { OpenAICompatibleTranscriptionModel } from '../openai-compatible/transcription';
import { authorized } from '../token-auth';
import type { CallContext, ChatModelAdapter, ChatRequest, ChatResult, Provider, ProviderOptions } from '../types';
import { EntraTokens, type EntraOptions } from './entra';

export const AZURE_OPENAI_FAMILY = 'azure-openai';

/** The data-plane API version sent when AZURE_OPENAI_API_VERSION is not set. */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

export interface AzureOpenAIOptions extends ProviderOptions {
  /** `api-version` on every request. */
  apiVersion?: string;
  /** Client credentials for Entra ID tokens, used instead of an API key. */
  entra?: EntraOptions;
}

const isReasoningModel = (deployment: string) => /^(o\d|gpt-5)/.test(deployment);

/**
 * The provider's options from the environment: AZURE_OPENAI_ENDPOINT (the resource, e.g.
 * `https://my-resource.openai.azure.com`), AZURE_OPENAI_API_KEY, AZURE_OPENAI_API_VERSION,
 * AZURE_OPENAI_TIMEOUT_MS, and Entra ID's AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET,
 * AZURE_AUTHORITY_HOST, AZURE_AUTHORITY_CA_FILE (checked at boot in config/env.ts).
 */
export function azureOpenAIOptionsFromEnv(env: NodeJS.ProcessEnv): Partial<AzureOpenAIOptions> {
  const entra = env.AZURE_TENANT_ID && env.AZURE_CLIENT_ID && env.AZURE_CLIENT_SECRET
    ? {
        tenantId: env.AZURE_TENANT_ID, clientId: env.AZURE_CLIENT_ID, clientSecret: env.AZURE_CLIENT_SECRET,
        ...(env.AZURE_AUTHORITY_HOST ? { authorityHost: env.AZURE_AUTHORITY_HOST } : {}),
        ...(env.AZURE_AUTHORITY_CA_FILE ? { authorityCaPem: fs.readFileSync(env.AZURE_AUTHORITY_CA_FILE, 'utf8') } : {}),
      }
    : undefined;
  return {
    baseUrl: env.AZURE_OPENAI_ENDPOINT || '',
    apiVersion: env.AZURE_OPENAI_API_VERSION || DEFAULT_AZURE_API_VERSION,
    ...(entra ? { entra } : {}),
  };
}

export function createAzureOpenAIProvider(options: AzureOpenAIOptions): Provider {
  const endpoint = options.baseUrl.replace(/\/+$/, '');
  // The key wins over Entra ID when both are set; without an endpoint nothing is configured.
  const tokens = endpoint && !options.apiKey && options.entra ? new EntraTokens(options.id, options.entra) : undefined;
  const credential = endpoint ? (options.apiKey || (tokens ? 'entra-id' : undefined)) : undefined;
  const spec = {
    family: AZURE_OPENAI_FAMILY,
    auth: tokens ? () => bearerAuth(tokens.current()) : keyHeaderAuth('api-key'),
    lowerCaseHeaderNames: true,
    query: { 'api-version': options.apiVersion ?? DEFAULT_AZURE_API_VERSION },
  };
  const deployment = (name: string) => new Connection(
    { ...options, apiKey: credential, baseUrl: `${endpoint}/openai/deployments/${encodeURIComponent(name)}` }, spec,
  );
  const ready = tokens ? (ctx: CallContext) => tokens.refresh(ctx) : undefined;
  return defineProvider(new Connection({ ...options, apiKey: credential }, spec), {
    chat: (name) => authorized(new AzureChatModel(new OpenAICompatibleChatModel(deployment(name), name, {
      maxCompletionTokens: isReasoningModel(name), nativeChoices: true,
    }), options.id), ready),
    embedding: (name) => authorized(new OpenAICompatibleEmbeddingModel(deployment(name), name), ready),
    image: (name) => authorized(new OpenAICompatibleImageModel(deployment(name), name), ready),
    speech: (name) => authorized(new OpenAICompatibleSpeechModel(deployment(name), name), ready),
    transcription: (name) => authorized(new OpenAICompatibleTranscriptionModel(deployment(name), name, { plainJson: false }), ready),
  });
}

/**
 * Chat whose whole answer Azure's content filter withheld (finish_reason `content_filter`, nothing else
 * said) is the caller's content refused: a 400 `content_filtered`, never an empty success.
 */
class AzureChatModel implements ChatModelAdapter {
  readonly nativeChoices: boolean;

  constructor(private readonly inner: OpenAICompatibleChatModel, private readonly provider: string) {
    this.nativeChoices = inner.nativeChoices;
  }

  async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const result = await this.inner.doGenerate(req, ctx);
    const choices = [result, ...(result.moreChoices ?? [])];
    if (choices.every((choice) => choice.finishReason === 'content_filter' && !choice.content && choice.toolCalls.length === 0)) {
      throw new UpstreamError(`${this.provider} withheld the answer under its content filter`, { kind: 'caller_error', provider: this.provider, upstreamStatus: 400, code: 'content_filtered' });
    }
    return result;
  }

  doStream(req: ChatRequest, ctx: CallContext) {
    return this.inner.doStream(req, ctx);
  }
}
