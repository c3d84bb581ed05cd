/**
 * The `bedrock` wire family: models on Amazon Bedrock through `@aws-sdk/client-bedrock-runtime`. Chat goes
 * through Converse and ConverseStream (one request shape for Anthropic, Llama, Mistral and Cohere models),
 * embeddings through InvokeModel with each model's own body (Titan, Cohere). Requests are SigV4-signed with
 * static keys, a role assumed through STS, or the SDK's default credential chain; the catalog record's
 * `upstreamId` is the Bedrock model id or an inference profile id.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import http from 'node:http';
import https from 'node:https';
import { Connection, defineProvider } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { BedrockChatModel } from './chat';
import { BedrockEmbeddingModel } from './embedding';
import { credentialsFailure } from './errors';

export const BEDROCK_FAMILY = 'bedrock';

interface AwsCredentialIdentity { accessKeyId: string; secretAccessKey: string; sessionToken?: string; expiration?: Date }
type AwsCredentialIdentityProvider = (props?: Record<string, unknown>) => Promise<AwsCredentialIdentity>;

export interface BedrockRoleOptions {
  roleArn: string;
  sessionName: string;
  externalId?: string;
  /** STS's address (a VPC endpoint, a test's fake); the region's public endpoint when absent. */
  stsEndpoint?: string;
}

export interface BedrockOptions extends ProviderOptions {
  /** The AWS region the models are called in; without it the provider is not configured. */
  region?: string;
  /** Static keys; without them the SDK's default credential chain (env, profile, SSO, IMDS, ...) is used. */
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** A role assumed with the static keys (or the default chain's credentials) before calling Bedrock. */
  role?: BedrockRoleOptions;
}

/**
 * The provider's options from the environment: BEDROCK_REGION, BEDROCK_BASE_URL (the runtime endpoint, for a
 * VPC endpoint or a test), BEDROCK_ACCESS_KEY_ID / BEDROCK_SECRET_ACCESS_KEY / BEDROCK_SESSION_TOKEN,
 * BEDROCK_ROLE_ARN / BEDROCK_ROLE_SESSION_NAME / BEDROCK_ROLE_EXTERNAL_ID / BEDROCK_STS_ENDPOINT and
 * BEDROCK_TIMEOUT_MS (checked at boot in config/env.ts).
 */
export function bedrockOptionsFromEnv(env: NodeJS.ProcessEnv): Partial<BedrockOptions> {
  return {
    region: env.BEDROCK_REGION || undefined,
    accessKeyId: env.BEDROCK_ACCESS_KEY_ID || undefined,
    secretAccessKey: env.BEDROCK_SECRET_ACCESS_KEY || undefined,
    sessionToken: env.BEDROCK_SESSION_TOKEN || undefined,
    ...(env.BEDROCK_ROLE_ARN
      ? {
          role: {
            roleArn: env.BEDROCK_ROLE_ARN,
            sessionName: env.BEDROCK_ROLE_SESSION_NAME || 'model-gateway',
            ...(env.BEDROCK_ROLE_EXTERNAL_ID ? { externalId: env.BEDROCK_ROLE_EXTERNAL_ID } : {}),
            ...(env.BEDROCK_STS_ENDPOINT ? { stsEndpoint: env.BEDROCK_STS_ENDPOINT } : {}),
          },
        }
      : {}),
  };
}

export function createBedrockProvider(options: BedrockOptions): Provider {
  // A region is what an operator sets to use Bedrock at all: credentials may come from the machine's chain.
  const region = options.region;
  const connection = new Connection({ ...options, apiKey: region ? 'sigv4' : undefined }, { family: BEDROCK_FAMILY, auth: () => ({}) });
  let client: BedrockRuntimeClient | undefined;
  // One client per provider: it keeps its connections and memoizes the credentials until they near expiry.
  const runtime = () => (client ??= new BedrockRuntimeClient({
    region,
    ...(connection.baseUrl ? { endpoint: connection.baseUrl } : {}),
    credentials: credentialsOf(options),
    // The gateway retries and falls back itself (per attempt, with its own deadline).
    maxAttempts: 1,
    // HTTP/1.1 on kept-alive connections, as every other provider is reached (the SDK's default for this client
    // is HTTP/2, which only the bidirectional-stream operations need, and which private endpoints may not speak).
    requestHandler: new NodeHttpHandler({
      httpAgent: new http.Agent({ keepAlive: true, keepAliveMsecs: 30_000 }),
      httpsAgent: new https.Agent({ keepAlive: true, keepAliveMsecs: 30_000 }),
    }),
  }));
  return defineProvider(connection, {
    chat: (model) => new BedrockChatModel(connection, runtime, model),
    embedding: (model) => new BedrockEmbeddingModel(connection, runtime, model),
  });
}

/**
 * The credentials Bedrock's requests are signed with. Failing to get them is an UpstreamError thrown from
 * inside the SDK's signing step (an STS refusal is the operator's problem; no credentials at all is an
 * unconfigured provider), so the call's error mapping sees it as it is.
 */
function credentialsOf(options: BedrockOptions): AwsCredentialIdentityProvider | undefined {
  const keys: AwsCredentialIdentity | undefined = options.accessKeyId && options.secretAccessKey
    ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey, ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}) }
    : undefined;
  let source: AwsCredentialIdentityProvider | undefined;
  if (options.role) {
    const { roleArn, sessionName, externalId, stsEndpoint } = options.role;
    source = fromTemporaryCredentials({
      params: { RoleArn: roleArn, RoleSessionName: sessionName, ...(externalId ? { ExternalId: externalId } : {}) },
      ...(keys ? { masterCredentials: keys } : {}),
      clientConfig: { region: options.region, maxAttempts: 1, ...(stsEndpoint ? { endpoint: stsEndpoint } : {}) },
    });
  } else if (keys) {
    return async () => keys;
  }
  if (!source) return undefined;
  const provider = source;
  return async (props) => {
    try {
      return await provider(props);
    } catch (err) {
      throw credentialsFailure(options.id, err, 'role');
    }
  };
}
