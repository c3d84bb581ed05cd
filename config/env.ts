/**
 * Process configuration from the environment, validated once at boot: a typo in a port or a missing
 * half of an S3 configuration stops the process with a clear message instead of failing later.
 */
import Ajv from 'ajv';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { repoRoot as defaultRepoRoot } from '../core/paths';
import { isTokenUrl, parseServiceAccountKey } from '../core/service-account-key';
import { DEFAULT_TASK_QUEUE } from '../workflows/contracts';

/** One payload encryption key: its id travels in each encrypted payload's metadata. */
export interface CodecKey {
  id: string;
  key: Buffer;
}

export interface GatewayConfig {
  port: number;
  host: string;
  /** Absent: the project starts its own Postgres (local server or embedded). */
  databaseUrl?: string;
  /** Absent: the project starts a Temporal dev server. */
  temporalAddress?: string;
  temporalNamespace: string;
  temporalUiUrl?: string;
  temporalTaskQueue: string;
  /**
   * TLS to the Temporal frontend (TEMPORAL_TLS, on by default with TEMPORAL_API_KEY): the CA to trust instead of
   * the system's (TEMPORAL_TLS_CA_PATH), the name to verify (TEMPORAL_TLS_SERVER_NAME), a client certificate for
   * mutual TLS (TEMPORAL_TLS_CERT_PATH + TEMPORAL_TLS_KEY_PATH), and Temporal Cloud's API key (TEMPORAL_API_KEY).
   * Absent: plain gRPC.
   */
  temporalTls?: TemporalTlsConfig;
  /** Connections each pool of a process may open to Postgres (DATABASE_POOL_MAX; the window counters have one of their own). */
  databasePoolMax: number;
  s3?: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string; bucket: string; forcePathStyle: boolean; publicEndpoint?: string };
  /** Where the project keeps built tools and local data (gitignored). */
  cacheDir: string;
  dataDir: string;
  /** Upper bound for JSON bodies. */
  maxJsonBodyBytes: number;
  /** Upper bound for one uploaded file. */
  maxUploadBytes: number;
  /** Credits granted to the dev workspace on first start. */
  devWorkspaceCredits: number;
  /** Trust X-Forwarded-For (behind a proxy) for the per-IP safety net. */
  trustProxy: boolean;
  /**
   * Browser origins allowed to call `/v1` (CORS), from `CORS_ALLOWED_ORIGINS` (comma-separated exact
   * origins, or `*` for any); empty (the default): CORS is off.
   */
  corsAllowedOrigins: string[];
  /** SMTP server for budget alert e-mails (`smtp://host:port`, `smtps://user:pass@host`); absent: none. */
  smtpUrl?: string;
  /** The From address of budget alert e-mails. */
  smtpFrom: string;
  /** Let budget-alert webhooks reach loopback/private addresses (local development and tests only). */
  allowPrivateWebhooks: boolean;
  /** How long a budget alert delivery keeps retrying before it is given up (and shown as failed). */
  alertDeliveryGiveUpMs: number;
  /** The per-IP safety net: requests per 10 minutes from one address. */
  ipRateLimit: number;
  /**
   * Where window counters (per-IP net, per-key requests per minute, sign-in throttles) live: Redis when
   * `REDIS_URL` is set (keys under `REDIS_KEY_PREFIX`), else Postgres. See domain/redis-counters.ts.
   */
  redis?: { url: string; keyPrefix: string };
  /**
   * Latency switches of the request path (all on by default; the benchmark turns them off one by one):
   * eager workflow start, local activities for ledger steps and model calls, in-process results, and the
   * first hop begun while the run starts (activities/first-hop.ts; GATEWAY_FIRST_HOP_AHEAD).
   */
  eagerStart: boolean;
  activityMode: 'local' | 'remote';
  inProcessResults: boolean;
  firstHopAhead: boolean;
  /**
   * Keys of the payload codec (TEMPORAL_CODEC_KEYS): the first encrypts, all decrypt. Absent: a development
   * key kept in the data dir (never in production, where the variable is required).
   */
  codecKeys?: CodecKey[];
  /** The bearer token of the operators' codec endpoint; absent: a development token in the data dir, or in production no endpoint. */
  operatorToken?: string;
  /**
   * Workspaces' own provider keys (BYOK_KEY_RING: `id:base64key` entries, newest first; the first seals, all
   * open). Absent: BYOK is off and its routes answer 403. `feeBasisPoints`: the share of a model's list price
   * charged when a workspace's own key serves it (BYOK_FEE_PERCENT, default 0).
   */
  byok?: { keyRing: CodecKey[]; feeBasisPoints: number };
  /** Browser origins (the Temporal Web UI) allowed to call the codec endpoint. */
  codecCorsOrigins: string[];
  /** Whether missing secrets (codec key, operator token) may be generated into the data dir: not in production. */
  generateDevSecrets: boolean;
  /**
   * The address people open, for every link in e-mails (PUBLIC_URL; required in production). Absent (outside
   * production): the API's own listen address, never a request's Host header.
   */
  publicUrl?: string;
  /**
   * Host names requests may name in `Host` (ALLOWED_HOSTS, plus PUBLIC_URL's host, the listen address and the
   * loopback names); any other is refused with 421 (a DNS-rebinding page names its own host).
   */
  allowedHosts: string[];
  /** Who may create an account: anyone, only people holding an invitation, or nobody (SIGNUP_MODE). */
  signupMode: SignupMode;
  /** E-mail domains sign-up accepts (SIGNUP_ALLOWED_DOMAINS, lower case); empty: any. */
  signupAllowedDomains: string[];
  /** HMAC secret of CAPTCHA challenges; shared by every API process (absent: a random one per process). */
  captchaSecret: string;
  /** CAPTCHA difficulty: PBKDF2 iterations per attempt and the largest counter a client may have to reach. */
  captchaCost: number;
  captchaMaxCounter: number;
  /** Where the built web app is (vite's output). */
  webDir: string;
  /** How long the API keeps asking an unreachable workflow service for a run's outcome before answering 504 `outcome_unknown`. */
  outcomeWaitSeconds: number;
  /** The hold sweeper: seconds between sweeps, and the age below which a hold is left to its run. */
  holdSweep: { everySeconds: number; minAgeSeconds: number };
  /**
   * Batches: lines of one batch in flight at once (BATCH_CONCURRENCY), lines of all a workspace's batches in
   * flight at once (BATCH_WORKSPACE_CONCURRENCY), and lines a batch's run starts before it continues as new
   * (BATCH_LINES_PER_RUN: bounds its history). Set when a batch starts; a running batch keeps its own.
   */
  batches: { concurrency: number; workspaceConcurrency: number; linesPerRun: number };
  /** A batch's completion window, ms, when not OpenAI's 24 h (BATCH_WINDOW_SECONDS: only to test expiry). */
  batchWindowMs: number | null;
  /**
   * Admission control: model requests one API process serves at once; beyond it a 503 with Retry-After
   * (0: unbounded). See bench/results/HISTORY.md for how the default was chosen.
   */
  maxInFlight: number;
  /** Prometheus metrics at `GET /metrics` (and the Temporal SDK's own, appended). */
  metricsEnabled: boolean;
  /** Where the Temporal SDK core serves its Prometheus metrics (absent: a free loopback port). */
  temporalMetricsAddress?: string;
  /** A worker-only process serves /metrics on this port (absent: none). */
  workerMetricsPort?: number;
  /**
   * A process without the API answers /livez and /readyz (and /metrics when WORKER_METRICS_PORT is not set) on
   * this port (WORKER_HEALTH_PORT; 0: any free port). Absent: 9464, or a free port when that one is taken.
   */
  workerHealthPort?: number;
  /**
   * How long a stopping process lets its in-flight requests, streams and activities finish (SIGTERM, SIGINT)
   * before it ends what remains (GATEWAY_SHUTDOWN_GRACE_SECONDS, default 30).
   */
  shutdownGraceMs: number;
  /** OTLP/HTTP collector base URL; set: OpenTelemetry tracing on (API -> workflow -> activity -> upstream). */
  otlpEndpoint?: string;
  otelServiceName: string;
  /**
   * Self-serve top-ups through Stripe Checkout and automatic top-ups (STRIPE_SECRET_KEY with
   * STRIPE_WEBHOOK_SECRET); absent: no payment processor, operators add credits (CLI or /operator/credits).
   */
  payments?: PaymentsConfig;
}

export interface PaymentsConfig {
  secretKey: string;
  webhookSecret: string;
  /** Another Stripe API address (stripe-mock in tests): its protocol, host and port. */
  apiBase?: { protocol: 'http' | 'https'; host: string; port: number };
  /** Price of one credit in the currency's smallest unit (cents), up to 6 decimals; a total is rounded up to a whole unit. */
  pricePerCreditMinor: string;
  currency: string;
  /** Whole credits one purchase may buy. */
  minCredits: number;
  maxCredits: number;
  /** An automatic top-up charges at most once per period of this many seconds. */
  autoTopUpPeriodSeconds: number;
}

export interface TemporalTlsConfig {
  serverName?: string;
  caPath?: string;
  /** A client certificate and its key (PEM), both or neither. */
  certPath?: string;
  keyPath?: string;
  apiKey?: string;
}

export const SIGNUP_MODES = ['open', 'invite-only', 'closed'] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

/** `id:base64key`; the key must decode to 32 bytes (checked after the pattern). */
const CODEC_KEY = '[A-Za-z0-9._-]{1,64}:[A-Za-z0-9+/_-]+={0,2}';
/** An origin as browsers send it: scheme, host and port, no path. */
const ORIGIN = 'https?://[^\\s,/]+';
/** A DNS name (labels of letters, digits and hyphens). */
const DOMAIN = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*';
/** A host as a Host header names it, without the port: a DNS name (a final dot allowed), an IPv4 address, or an IPv6 one in brackets. */
const HOST_NAME = `(${DOMAIN}\\.?|\\[[0-9A-Fa-f:.]+\\])`;

const schema = {
  type: 'object',
  properties: {
    PORT: { type: 'string', pattern: '^[0-9]{1,5}$' },
    HOST: { type: 'string', minLength: 1 },
    DATABASE_URL: { type: 'string', pattern: '^postgres(ql)?://' },
    TEMPORAL_ADDRESS: { type: 'string', pattern: '^[^\\s:]+:[0-9]{1,5}$' },
    TEMPORAL_NAMESPACE: { type: 'string', minLength: 1 },
    TEMPORAL_UI_URL: { type: 'string', pattern: '^https?://' },
    TEMPORAL_TASK_QUEUE: { type: 'string', minLength: 1 },
    TEMPORAL_TLS: { enum: ['true', 'false', '1', '0'] },
    TEMPORAL_TLS_SERVER_NAME: { type: 'string', pattern: `^${DOMAIN}$` },
    TEMPORAL_TLS_CA_PATH: { type: 'string', minLength: 1 },
    TEMPORAL_TLS_CERT_PATH: { type: 'string', minLength: 1 },
    TEMPORAL_TLS_KEY_PATH: { type: 'string', minLength: 1 },
    TEMPORAL_API_KEY: { type: 'string', pattern: '^[\\x21-\\x7e]{8,4096}$' },
    DATABASE_POOL_MAX: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
    S3_ENDPOINT: { type: 'string', pattern: '^https?://' },
    S3_PUBLIC_ENDPOINT: { type: 'string', pattern: '^https?://' },
    S3_REGION: { type: 'string', minLength: 1 },
    S3_ACCESS_KEY_ID: { type: 'string', minLength: 1 },
    S3_SECRET_ACCESS_KEY: { type: 'string', minLength: 1 },
    S3_BUCKET: { type: 'string', pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' },
    S3_FORCE_PATH_STYLE: { enum: ['true', 'false', '1', '0'] },
    GATEWAY_CACHE_DIR: { type: 'string', minLength: 1 },
    GATEWAY_DATA_DIR: { type: 'string', minLength: 1 },
    MAX_JSON_BODY_BYTES: { type: 'string', pattern: '^[0-9]+$' },
    MAX_UPLOAD_BYTES: { type: 'string', pattern: '^[0-9]+$' },
    DEV_WORKSPACE_CREDITS: { type: 'string', pattern: '^[0-9]+$' },
    TRUST_PROXY: { enum: ['true', 'false', '1', '0'] },
    CORS_ALLOWED_ORIGINS: { type: 'string', pattern: '^\\s*(\\*|https?://[^\\s,]+)(\\s*,\\s*(\\*|https?://[^\\s,]+))*\\s*$' },
    SMTP_URL: { type: 'string', pattern: '^smtps?://[^\\s]+$' },
    ALLOW_PRIVATE_WEBHOOKS: { enum: ['true', 'false', '1', '0'] },
    ALERT_DELIVERY_GIVE_UP_SECONDS: { type: 'string', pattern: '^[1-9][0-9]*$' },
    SMTP_FROM: { type: 'string', minLength: 3 },
    IP_RATE_LIMIT: { type: 'string', pattern: '^[0-9]+$' },
    REDIS_URL: { type: 'string', pattern: '^rediss?://[^\\s]+$' },
    REDIS_KEY_PREFIX: { type: 'string', pattern: '^[\\x21-\\x7e]{1,100}$' },
    GATEWAY_EAGER_START: { enum: ['true', 'false', '1', '0'] },
    GATEWAY_ACTIVITY_MODE: { enum: ['local', 'remote'] },
    GATEWAY_INPROCESS_RESULTS: { enum: ['true', 'false', '1', '0'] },
    GATEWAY_FIRST_HOP_AHEAD: { enum: ['true', 'false', '1', '0'] },
    TEMPORAL_CODEC_KEYS: { type: 'string', pattern: `^${CODEC_KEY}(\\s*,\\s*${CODEC_KEY})*$` },
    BYOK_KEY_RING: { type: 'string', pattern: `^${CODEC_KEY}(\\s*,\\s*${CODEC_KEY})*$` },
    BYOK_FEE_PERCENT: { type: 'string', pattern: '^(100(\\.0{1,2})?|[0-9]{1,2}(\\.[0-9]{1,2})?)$' },
    OPERATOR_TOKEN: { type: 'string', pattern: '^[\\x21-\\x7e]{32,512}$' },
    CODEC_CORS_ORIGINS: { type: 'string', pattern: `^${ORIGIN}(\\s*,\\s*${ORIGIN})*$` },
    TEMPORAL_UI_PORT: { type: 'string', pattern: '^[0-9]{1,5}$' },
    PUBLIC_URL: { type: 'string', pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?[^/\\s?#]$' },
    ALLOWED_HOSTS: { type: 'string', pattern: `^\\s*${HOST_NAME}(\\s*,\\s*${HOST_NAME})*\\s*$` },
    SIGNUP_MODE: { enum: SIGNUP_MODES },
    SIGNUP_ALLOWED_DOMAINS: { type: 'string', pattern: `^\\s*@?${DOMAIN}(\\s*,\\s*@?${DOMAIN})*\\s*$` },
    CAPTCHA_SECRET: { type: 'string', minLength: 16 },
    CAPTCHA_COST: { type: 'string', pattern: '^[1-9][0-9]*$' },
    CAPTCHA_MAX_COUNTER: { type: 'string', pattern: '^[1-9][0-9]*$' },
    GATEWAY_OUTCOME_WAIT_SECONDS: { type: 'string', pattern: '^[0-9]+$' },
    GATEWAY_HOLD_SWEEP_SECONDS: { type: 'string', pattern: '^[1-9][0-9]*$' },
    GATEWAY_HOLD_SWEEP_MIN_AGE_SECONDS: { type: 'string', pattern: '^[0-9]+$' },
    GATEWAY_MAX_IN_FLIGHT: { type: 'string', pattern: '^[0-9]+$' },
    BATCH_CONCURRENCY: { type: 'string', pattern: '^[1-9][0-9]{0,3}$' },
    BATCH_WORKSPACE_CONCURRENCY: { type: 'string', pattern: '^[1-9][0-9]{0,4}$' },
    BATCH_LINES_PER_RUN: { type: 'string', pattern: '^[1-9][0-9]{0,4}$' },
    BATCH_WINDOW_SECONDS: { type: 'string', pattern: '^[1-9][0-9]{0,4}$' },
    METRICS_ENABLED: { enum: ['true', 'false', '1', '0'] },
    TEMPORAL_METRICS_ADDRESS: { type: 'string', pattern: '^[^\\s:]+:[0-9]{1,5}$' },
    WORKER_METRICS_PORT: { type: 'string', pattern: '^[0-9]{1,5}$' },
    WORKER_HEALTH_PORT: { type: 'string', pattern: '^[0-9]{1,5}$' },
    GATEWAY_SHUTDOWN_GRACE_SECONDS: { type: 'string', pattern: '^[0-9]{1,4}(\\.[0-9]{1,3})?$' },
    OTEL_EXPORTER_OTLP_ENDPOINT: { type: 'string', pattern: '^https?://' },
    OTEL_SERVICE_NAME: { type: 'string', minLength: 1 },
    STRIPE_SECRET_KEY: { type: 'string', pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9_]+$' },
    STRIPE_WEBHOOK_SECRET: { type: 'string', pattern: '^whsec_[A-Za-z0-9_+/=]+$' },
    STRIPE_API_BASE: { type: 'string', pattern: '^https?://[^\\s/:]+(:[0-9]{1,5})?/?$' },
    TOPUP_PRICE_PER_CREDIT: { type: 'string', pattern: '^[0-9]{1,9}(\\.[0-9]{1,6})?$' },
    TOPUP_CURRENCY: { type: 'string', pattern: '^[a-z]{3}$' },
    TOPUP_MIN_CREDITS: { type: 'string', pattern: '^[1-9][0-9]{0,8}$' },
    TOPUP_MAX_CREDITS: { type: 'string', pattern: '^[1-9][0-9]{0,8}$' },
    AUTO_TOPUP_PERIOD_SECONDS: { type: 'string', pattern: '^[1-9][0-9]{0,9}$' },
    AZURE_OPENAI_ENDPOINT: { type: 'string', pattern: '^https?://[^\\s/?#]+/?$' },
    AZURE_OPENAI_API_KEY: { type: 'string', pattern: '^[\\x21-\\x7e]{1,512}$' },
    AZURE_OPENAI_API_VERSION: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$' },
    AZURE_TENANT_ID: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
    AZURE_CLIENT_ID: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
    AZURE_CLIENT_SECRET: { type: 'string', minLength: 1 },
    AZURE_AUTHORITY_HOST: { type: 'string', pattern: '^https://[^\\s/?#]+/?$' },
    AZURE_AUTHORITY_CA_FILE: { type: 'string', minLength: 1 },
    BEDROCK_REGION: { type: 'string', pattern: '^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$' },
    BEDROCK_BASE_URL: { type: 'string', pattern: '^https?://[^\\s/?#]+/?$' },
    BEDROCK_ACCESS_KEY_ID: { type: 'string', pattern: '^[A-Z0-9]{16,128}$' },
    BEDROCK_SECRET_ACCESS_KEY: { type: 'string', pattern: '^[\\x21-\\x7e]{16,128}$' },
    BEDROCK_SESSION_TOKEN: { type: 'string', pattern: '^[\\x21-\\x7e]{1,4096}$' },
    BEDROCK_ROLE_ARN: { type: 'string', pattern: '^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\\w+=,.@/-]{1,512}$' },
    BEDROCK_ROLE_SESSION_NAME: { type: 'string', pattern: '^[\\w+=,.@-]{2,64}$' },
    BEDROCK_ROLE_EXTERNAL_ID: { type: 'string', pattern: '^[\\w+=,.@:/-]{2,1224}$' },
    BEDROCK_STS_ENDPOINT: { type: 'string', pattern: '^https?://[^\\s/?#]+/?$' },
    BEDROCK_TIMEOUT_MS: { type: 'string', pattern: '^[1-9][0-9]{0,6}$' },
    VERTEX_CREDENTIALS_FILE: { type: 'string', minLength: 1 },
    VERTEX_CREDENTIALS_JSON: { type: 'string', minLength: 2 },
    // Google Cloud project ids: 6 to 30 lower-case letters, digits and hyphens, a letter first, no hyphen last.
    VERTEX_PROJECT: { type: 'string', pattern: '^[a-z][a-z0-9-]{4,28}[a-z0-9]$' },
    VERTEX_LOCATION: { type: 'string', pattern: '^(global|[a-z]+-[a-z]+[0-9]+)$' },
    VERTEX_BASE_URL: { type: 'string', pattern: '^https?://[^\\s/?#]+/?$' },
    VERTEX_TOKEN_URL: { type: 'string', pattern: '^https?://[^\\s?#]+$' },
  },
  dependencies: {
    S3_ENDPOINT: ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_BUCKET'],
    STRIPE_SECRET_KEY: ['STRIPE_WEBHOOK_SECRET'],
    STRIPE_WEBHOOK_SECRET: ['STRIPE_SECRET_KEY'],
    TEMPORAL_TLS_CERT_PATH: ['TEMPORAL_TLS_KEY_PATH'],
    TEMPORAL_TLS_KEY_PATH: ['TEMPORAL_TLS_CERT_PATH'],
    // Entra ID's client credentials come together (providers/azure-openai).
    AZURE_TENANT_ID: ['AZURE_CLIENT_ID', 'AZURE_CLIENT_SECRET'],
    AZURE_CLIENT_ID: ['AZURE_TENANT_ID', 'AZURE_CLIENT_SECRET'],
    AZURE_CLIENT_SECRET: ['AZURE_TENANT_ID', 'AZURE_CLIENT_ID'],
    AZURE_AUTHORITY_HOST: ['AZURE_TENANT_ID'],
    AZURE_AUTHORITY_CA_FILE: ['AZURE_AUTHORITY_HOST'],
    // AWS keys come in pairs; Bedrock's other settings mean nothing without its region (providers/bedrock).
    BEDROCK_ACCESS_KEY_ID: ['BEDROCK_SECRET_ACCESS_KEY', 'BEDROCK_REGION'],
    BEDROCK_SECRET_ACCESS_KEY: ['BEDROCK_ACCESS_KEY_ID'],
    BEDROCK_SESSION_TOKEN: ['BEDROCK_ACCESS_KEY_ID'],
    BEDROCK_ROLE_ARN: ['BEDROCK_REGION'],
    BEDROCK_ROLE_SESSION_NAME: ['BEDROCK_ROLE_ARN'],
    BEDROCK_ROLE_EXTERNAL_ID: ['BEDROCK_ROLE_ARN'],
    BEDROCK_STS_ENDPOINT: ['BEDROCK_ROLE_ARN'],
    BEDROCK_BASE_URL: ['BEDROCK_REGION'],
  },
} as const;

const validate = new Ajv({ allErrors: true }).compile(schema);

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, repoRoot = defaultRepoRoot): GatewayConfig {
  const present: Record<string, string> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') present[key] = value;
  }
  if (!validate(present)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath.replace(/^\//, '') || e.params && JSON.stringify(e.params)} ${e.message}`);
    throw new ConfigError(`Invalid environment configuration:\n  - ${problems.join('\n  - ')}`);
  }
  const bool = (v: string | undefined, dflt: boolean) => (v === undefined ? dflt : v === 'true' || v === '1');
  const production = env.NODE_ENV === 'production';
  if (production && !present.TEMPORAL_CODEC_KEYS) {
    throw new ConfigError('Invalid environment configuration:\n  - TEMPORAL_CODEC_KEYS is required in production (NODE_ENV=production): `id:base64key`, a 32-byte key, e.g. from `openssl rand -base64 32`');
  }
  if (production && !present.PUBLIC_URL) {
    throw new ConfigError('Invalid environment configuration:\n  - PUBLIC_URL is required in production (NODE_ENV=production): the address people open (e.g. https://gateway.example.com), from which every link in e-mails is built');
  }
  if (present.AZURE_AUTHORITY_CA_FILE !== undefined && !isReadableFile(present.AZURE_AUTHORITY_CA_FILE)) {
    throw new ConfigError(`Invalid environment configuration:\n  - AZURE_AUTHORITY_CA_FILE=${present.AZURE_AUTHORITY_CA_FILE} is not a readable file`);
  }
  checkVertex(present);
  if (present.BYOK_FEE_PERCENT !== undefined && present.BYOK_KEY_RING === undefined) {
    throw new ConfigError('Invalid environment configuration:\n  - BYOK_FEE_PERCENT is set without BYOK_KEY_RING: workspaces\' own provider keys need the key ring that seals them (`id:base64key`, 32-byte keys)');
  }
  const uiPort = present.TEMPORAL_UI_PORT ?? '8233';
  const host = present.HOST ?? '127.0.0.1';
  const cacheDir = present.GATEWAY_CACHE_DIR ?? `${repoRoot}/.cache`;
  return {
    port: Number(present.PORT ?? 8080),
    host,
    databaseUrl: present.DATABASE_URL,
    temporalAddress: present.TEMPORAL_ADDRESS,
    temporalNamespace: present.TEMPORAL_NAMESPACE ?? 'default',
    temporalUiUrl: present.TEMPORAL_UI_URL,
    temporalTaskQueue: present.TEMPORAL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    temporalTls: temporalTlsConfig(present, bool),
    databasePoolMax: Number(present.DATABASE_POOL_MAX ?? 20),
    s3: present.S3_ENDPOINT
      ? {
          endpoint: present.S3_ENDPOINT,
          publicEndpoint: present.S3_PUBLIC_ENDPOINT,
          region: present.S3_REGION ?? 'us-east-1',
          accessKeyId: present.S3_ACCESS_KEY_ID,
          secretAccessKey: present.S3_SECRET_ACCESS_KEY,
          bucket: present.S3_BUCKET,
          forcePathStyle: bool(present.S3_FORCE_PATH_STYLE, true),
        }
      : undefined,
    cacheDir,
    dataDir: present.GATEWAY_DATA_DIR ?? `${repoRoot}/.data`,
    maxJsonBodyBytes: Number(present.MAX_JSON_BODY_BYTES ?? 25 * 1024 * 1024),
    maxUploadBytes: Number(present.MAX_UPLOAD_BYTES ?? 100 * 1024 * 1024),
    devWorkspaceCredits: Number(present.DEV_WORKSPACE_CREDITS ?? 1000),
    trustProxy: bool(present.TRUST_PROXY, false),
    corsAllowedOrigins: (present.CORS_ALLOWED_ORIGINS ?? '').split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean),
    smtpUrl: present.SMTP_URL,
    allowPrivateWebhooks: bool(present.ALLOW_PRIVATE_WEBHOOKS, false),
    alertDeliveryGiveUpMs: Number(present.ALERT_DELIVERY_GIVE_UP_SECONDS ?? 24 * 3600) * 1000,
    smtpFrom: present.SMTP_FROM ?? 'Model Gateway <alerts@localhost>',
    ipRateLimit: Number(present.IP_RATE_LIMIT ?? 5000),
    redis: present.REDIS_URL ? { url: present.REDIS_URL, keyPrefix: present.REDIS_KEY_PREFIX ?? 'gateway:' } : undefined,
    eagerStart: bool(present.GATEWAY_EAGER_START, true),
    activityMode: (present.GATEWAY_ACTIVITY_MODE as 'local' | 'remote' | undefined) ?? 'local',
    inProcessResults: bool(present.GATEWAY_INPROCESS_RESULTS, true),
    firstHopAhead: bool(present.GATEWAY_FIRST_HOP_AHEAD, true),
    codecKeys: present.TEMPORAL_CODEC_KEYS === undefined ? undefined : parseCodecKeys(present.TEMPORAL_CODEC_KEYS, 'TEMPORAL_CODEC_KEYS'),
    byok: present.BYOK_KEY_RING === undefined ? undefined : {
      keyRing: parseCodecKeys(present.BYOK_KEY_RING, 'BYOK_KEY_RING'),
      feeBasisPoints: percentToBasisPoints(present.BYOK_FEE_PERCENT ?? '0'),
    },
    operatorToken: present.OPERATOR_TOKEN,
    codecCorsOrigins: present.CODEC_CORS_ORIGINS
      ? splitList(present.CODEC_CORS_ORIGINS)
      : [...new Set([`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`, ...(present.TEMPORAL_UI_URL ? [new URL(present.TEMPORAL_UI_URL).origin] : [])])],
    generateDevSecrets: !production,
    publicUrl: present.PUBLIC_URL,
    allowedHosts: allowedHostNames({ listed: present.ALLOWED_HOSTS, publicUrl: present.PUBLIC_URL, host }),
    signupMode: (present.SIGNUP_MODE as SignupMode | undefined) ?? 'open',
    signupAllowedDomains: splitList(present.SIGNUP_ALLOWED_DOMAINS ?? '').map((d) => d.replace(/^@/, '').toLowerCase()),
    captchaSecret: present.CAPTCHA_SECRET ?? randomBytes(32).toString('hex'),
    captchaCost: Number(present.CAPTCHA_COST ?? 1000),
    captchaMaxCounter: Number(present.CAPTCHA_MAX_COUNTER ?? 3000),
    webDir: `${repoRoot}/web/dist`,
    outcomeWaitSeconds: Number(present.GATEWAY_OUTCOME_WAIT_SECONDS ?? 60),
    batches: {
      concurrency: Number(present.BATCH_CONCURRENCY ?? 16),
      workspaceConcurrency: Number(present.BATCH_WORKSPACE_CONCURRENCY ?? 64),
      linesPerRun: Number(present.BATCH_LINES_PER_RUN ?? 1000),
    },
    batchWindowMs: present.BATCH_WINDOW_SECONDS ? Number(present.BATCH_WINDOW_SECONDS) * 1000 : null,
    holdSweep: {
      everySeconds: Number(present.GATEWAY_HOLD_SWEEP_SECONDS ?? 300),
      minAgeSeconds: Number(present.GATEWAY_HOLD_SWEEP_MIN_AGE_SECONDS ?? 60),
    },
    maxInFlight: Number(present.GATEWAY_MAX_IN_FLIGHT ?? 128),
    metricsEnabled: bool(present.METRICS_ENABLED, true),
    temporalMetricsAddress: present.TEMPORAL_METRICS_ADDRESS,
    workerMetricsPort: present.WORKER_METRICS_PORT ? Number(present.WORKER_METRICS_PORT) : undefined,
    workerHealthPort: present.WORKER_HEALTH_PORT ? Number(present.WORKER_HEALTH_PORT) : undefined,
    shutdownGraceMs: Math.round(Number(present.GATEWAY_SHUTDOWN_GRACE_SECONDS ?? 30) * 1000),
    otlpEndpoint: present.OTEL_EXPORTER_OTLP_ENDPOINT,
    otelServiceName: present.OTEL_SERVICE_NAME ?? 'model-gateway',
    payments: paymentsConfig(present),
  };
}

function paymentsConfig(present: Record<string, string>): PaymentsConfig | undefined {
  if (!present.STRIPE_SECRET_KEY) return undefined;
  const minCredits = Number(present.TOPUP_MIN_CREDITS ?? 500);
  const maxCredits = Number(present.TOPUP_MAX_CREDITS ?? 100_000);
  if (minCredits > maxCredits) throw new ConfigError(`Invalid environment configuration:\n  - TOPUP_MIN_CREDITS (${minCredits}) is above TOPUP_MAX_CREDITS (${maxCredits})`);
  const price = present.TOPUP_PRICE_PER_CREDIT ?? '1';
  if (Number(price) <= 0) throw new ConfigError('Invalid environment configuration:\n  - TOPUP_PRICE_PER_CREDIT must be above 0');
  // Stripe charges at most 99,999,999 of the currency's smallest unit at once.
  if (Number(price) * maxCredits > 99_999_999) throw new ConfigError(`Invalid environment configuration:\n  - TOPUP_MAX_CREDITS x TOPUP_PRICE_PER_CREDIT must stay within 99999999 (Stripe's largest charge), not ${Number(price) * maxCredits}`);
  const base = present.STRIPE_API_BASE ? new URL(present.STRIPE_API_BASE) : undefined;
  return {
    secretKey: present.STRIPE_SECRET_KEY,
    webhookSecret: present.STRIPE_WEBHOOK_SECRET,
    apiBase: base && {
      protocol: base.protocol === 'http:' ? 'http' : 'https',
      host: base.hostname,
      port: Number(base.port || (base.protocol === 'http:' ? 80 : 443)),
    },
    pricePerCreditMinor: price,
    currency: present.TOPUP_CURRENCY ?? 'usd',
    minCredits,
    maxCredits,
    autoTopUpPeriodSeconds: Number(present.AUTO_TOPUP_PERIOD_SECONDS ?? 86_400),
  };
}

/** The TEMPORAL_TLS_* variables and TEMPORAL_API_KEY: refused when they contradict each other or name a file that is not there. */
function temporalTlsConfig(present: Record<string, string>, bool: (v: string | undefined, dflt: boolean) => boolean): TemporalTlsConfig | undefined {
  const on = bool(present.TEMPORAL_TLS, present.TEMPORAL_API_KEY !== undefined);
  const named = ['TEMPORAL_TLS_SERVER_NAME', 'TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH'].filter((k) => present[k] !== undefined);
  if (!on) {
    if (named.length > 0) throw new ConfigError(`Invalid environment configuration:\n  - ${named.join(', ')} set while TEMPORAL_TLS=false: set TEMPORAL_TLS=true, or leave them out`);
    if (present.TEMPORAL_API_KEY !== undefined) throw new ConfigError('Invalid environment configuration:\n  - TEMPORAL_API_KEY is sent only over TLS: leave TEMPORAL_TLS unset or true');
    return undefined;
  }
  for (const key of ['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH']) {
    const file = present[key];
    if (file !== undefined && !isReadableFile(file)) throw new ConfigError(`Invalid environment configuration:\n  - ${key}=${file} is not a readable file`);
  }
  return {
    serverName: present.TEMPORAL_TLS_SERVER_NAME, caPath: present.TEMPORAL_TLS_CA_PATH,
    certPath: present.TEMPORAL_TLS_CERT_PATH, keyPath: present.TEMPORAL_TLS_KEY_PATH, apiKey: present.TEMPORAL_API_KEY,
  };
}

/** Vertex AI's service account key (one source, a usable key), its token endpoint and a project to bill. */
function checkVertex(present: Record<string, string>): void {
  const fail = (problem: string) => new ConfigError(`Invalid environment configuration:\n  - ${problem}`);
  if (present.VERTEX_CREDENTIALS_FILE !== undefined && present.VERTEX_CREDENTIALS_JSON !== undefined) {
    throw fail('VERTEX_CREDENTIALS_FILE and VERTEX_CREDENTIALS_JSON are both set: give the service account key one way');
  }
  if (present.VERTEX_TOKEN_URL !== undefined && !isTokenUrl(present.VERTEX_TOKEN_URL)) {
    throw fail(`VERTEX_TOKEN_URL=${present.VERTEX_TOKEN_URL} must be an https URL (plain http only to this machine)`);
  }
  let source: string;
  let text: string;
  if (present.VERTEX_CREDENTIALS_FILE !== undefined) {
    source = `VERTEX_CREDENTIALS_FILE=${present.VERTEX_CREDENTIALS_FILE}`;
    if (!isReadableFile(present.VERTEX_CREDENTIALS_FILE)) throw fail(`${source} is not a readable file`);
    text = fs.readFileSync(present.VERTEX_CREDENTIALS_FILE, 'utf8');
  } else if (present.VERTEX_CREDENTIALS_JSON !== undefined) {
    source = 'VERTEX_CREDENTIALS_JSON';
    text = present.VERTEX_CREDENTIALS_JSON;
  } else {
    return;
  }
  const key = parseServiceAccountKey(text);
  if (typeof key === 'string') throw fail(`${source} ${key}`);
  if (present.VERTEX_PROJECT === undefined && !key.project_id) throw fail(`VERTEX_PROJECT is required: ${source} names no project_id`);
}

function isReadableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Parses `k2:base64key,k1:base64key` (the form of TEMPORAL_CODEC_KEYS and of the development key file). */
export function parseCodecKeys(text: string, source: string): CodecKey[] {
  const keys = splitList(text).map((entry) => {
    const at = entry.indexOf(':');
    const id = entry.slice(0, at);
    const key = Buffer.from(entry.slice(at + 1), 'base64');
    if (at < 1 || key.length !== 32) throw new ConfigError(`${source}: key '${id}' must be 32 bytes, base64-encoded (e.g. \`openssl rand -base64 32\`)`);
    return { id, key };
  });
  const ids = keys.map((k) => k.id);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) throw new ConfigError(`${source}: key id '${repeated}' appears twice`);
  return keys;
}

/** `2.5` (percent, at most two decimals: the schema's pattern) -> 250 basis points, exactly. */
function percentToBasisPoints(percent: string): number {
  const [whole, fraction = ''] = percent.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}

/** Loopback names: a page of another site cannot make a browser send them, so they are always allowed. */
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '::1'];

/**
 * The host names the API answers: those listed, PUBLIC_URL's, the listen address (unless it is a wildcard)
 * and the loopback names; lower case, IPv6 without brackets (as `normalizeHostName` reads a Host header).
 */
function allowedHostNames(opts: { listed?: string; publicUrl?: string; host: string }): string[] {
  const names = [...splitList(opts.listed ?? ''), ...LOOPBACK_HOSTS];
  if (opts.publicUrl) names.push(new URL(opts.publicUrl).hostname);
  if (!['0.0.0.0', '::', '[::]'].includes(opts.host)) names.push(opts.host);
  return [...new Set(names.map(normalizeHostName))];
}

/** A host name as compared: lower case, without a trailing dot or IPv6 brackets. */
export function normalizeHostName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '').replace(/^\[(.*)\]$/, '$1');
}

function splitList(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter(Boolean);
}
