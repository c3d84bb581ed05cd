/**
 * The `vertex` wire family: Google Cloud Vertex AI, serving Google's Gemini models and Anthropic's Claude
 * models from the operator's own project and region. Gemini speaks the Gemini API's generateContent format
 * (the google family's mapping), Claude the Messages API (the anthropic family's mapping); what differs is
 * the address (`{base}/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`)
 * and the auth (a service account's OAuth access token, see auth.ts).
 */
import fs from 'node:fs';
import { AnthropicChatModel, type MessagesEndpoint } from '../anthropic/chat';
import { DEFAULT_MAX_TOKENS } from '../anthropic';
import { bearerAuth, Connection, defineProvider } from '../connection';
import { GoogleChatModel } from '../google/chat';
import { authorized } from '../token-auth';
import type { CallContext, Provider, ProviderOptions } from '../types';
import { parseServiceAccountKey, type ServiceAccountKey } from '../../core/service-account-key';
import { VertexTokens } from './auth';
import { VertexEmbeddingModel } from './embedding';

export const VERTEX_FAMILY = 'vertex';

/** The region used when VERTEX_LOCATION is not set. */
export const DEFAULT_VERTEX_LOCATION = 'us-central1';

/** Claude on Vertex takes its API version in the body (and no `model`: the URL names it). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export interface VertexOptions extends ProviderOptions {
  /** The Google Cloud project billed for the calls. */
  project?: string;
  /** The region (`us-central1`, `europe-west4`, ...) or `global`. */
  location?: string;
  credentials?: ServiceAccountKey;
  /** Where the signed JWT is exchanged, instead of Google's endpoint (or the key's `token_uri`). */
  tokenUrl?: string;
}

/**
 * The provider's options from the environment: VERTEX_CREDENTIALS_FILE (a service account key file) or
 * VERTEX_CREDENTIALS_JSON (its content), VERTEX_PROJECT (default: the key's `project_id`), VERTEX_LOCATION,
 * VERTEX_BASE_URL, VERTEX_TOKEN_URL, VERTEX_TIMEOUT_MS (all checked at boot in config/env.ts).
 */
export function vertexOptionsFromEnv(env: NodeJS.ProcessEnv): Partial<VertexOptions> {
  const text = env.VERTEX_CREDENTIALS_JSON || (env.VERTEX_CREDENTIALS_FILE ? fs.readFileSync(env.VERTEX_CREDENTIALS_FILE, 'utf8') : undefined);
  const parsed = text === undefined ? undefined : parseServiceAccountKey(text);
  const credentials = typeof parsed === 'object' ? parsed : undefined;
  const location = env.VERTEX_LOCATION || DEFAULT_VERTEX_LOCATION;
  return {
    baseUrl: env.VERTEX_BASE_URL || vertexHost(location),
    // Vertex is reached with the service account only, never a `VERTEX_API_KEY`.
    apiKey: undefined,
    location,
    ...(env.VERTEX_PROJECT || credentials?.project_id ? { project: env.VERTEX_PROJECT || credentials?.project_id } : {}),
    ...(credentials ? { credentials } : {}),
    ...(env.VERTEX_TOKEN_URL ? { tokenUrl: env.VERTEX_TOKEN_URL } : {}),
  };
}

/** A region's own host (`us-central1-aiplatform.googleapis.com`); the global endpoint has none. */
export function vertexHost(location: string): string {
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

export function createVertexProvider(options: VertexOptions): Provider {
  const location = options.location || DEFAULT_VERTEX_LOCATION;
  const baseUrl = options.baseUrl || vertexHost(location);
  // Without a key or a project nothing is configured: the models are listed as unavailable.
  const tokens = options.credentials && options.project ? new VertexTokens(options.id, options.credentials, options.tokenUrl) : undefined;
  const connection = new Connection({ ...options, baseUrl, apiKey: tokens ? 'service-account' : undefined }, {
    family: VERTEX_FAMILY,
    auth: () => bearerAuth(tokens!.current()),
    lowerCaseHeaderNames: true,
  });
  const modelUrl = (publisher: 'google' | 'anthropic', model: string, method: string) => connection.url(
    `/v1/projects/${encodeURIComponent(options.project ?? '')}/locations/${encodeURIComponent(location)}/publishers/${publisher}/models/${segment(model)}:${method}`,
  );
  const ready = tokens ? (ctx: CallContext) => tokens.refresh(ctx) : undefined;
  return defineProvider(connection, {
    // Anthropic's models carry Anthropic's ids (`claude-sonnet-4@20250514`); every other model is Google's.
    chat: (model) => authorized(isClaude(model)
      ? new AnthropicChatModel(connection, model, { defaultMaxTokens: DEFAULT_MAX_TOKENS, endpoint: claudeEndpoint((method) => modelUrl('anthropic', model, method)) })
      : new GoogleChatModel(connection, model, (method) => modelUrl('google', model, method)), ready),
    embedding: (model) => authorized(new VertexEmbeddingModel(connection, model, modelUrl('google', model, 'predict')), ready),
  });
}

/** A model id as a path segment: `@` (Claude's version pin, `claude-sonnet-4@20250514`) stays as Vertex writes it. */
const segment = (model: string) => encodeURIComponent(model).replace(/%40/g, '@');

const isClaude = (model: string) => /^claude-/.test(model);

/** Claude on Vertex: `:rawPredict`, or `:streamRawPredict` with `stream: true`; the version in the body, no `model`. */
function claudeEndpoint(url: (method: string) => string): MessagesEndpoint {
  return {
    url: (stream) => url(stream ? 'streamRawPredict' : 'rawPredict'),
    body: ({ model: _model, ...body }, stream) => ({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body, ...(stream ? { stream: true } : {}) }),
  };
}
