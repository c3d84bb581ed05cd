/**
 * Process configuration from the environment, validated once at boot: a typo in a port or a missing
 * half of an S3 configuration stops the process with a clear message instead of failing later.
 */
import Ajv from 'ajv';
import { repoRoot as defaultRepoRoot } from '../core/paths';

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
  /** SMTP server for budget alert e-mails (`smtp://host:port`, `smtps://user:pass@host`); absent: none. */
  smtpUrl?: string;
  /** The From address of budget alert e-mails. */
  smtpFrom: string;
  /** Let budget-alert webhooks reach loopback/private addresses (local development and tests only). */
  allowPrivateWebhooks: boolean;
  /** The per-IP safety net: requests per 10 minutes from one address. */
  ipRateLimit: number;
  /**
   * Latency switches of the request path (all on by default; the benchmark turns them off one by one):
   * eager workflow start, local activities for ledger steps and model calls, in-process results.
   */
  eagerStart: boolean;
  activityMode: 'local' | 'remote';
  inProcessResults: boolean;
  /**
   * Admission control: model requests one API process serves at once; beyond it a 503 with Retry-After
   * (0: unbounded). See bench/README.md for how the default was chosen.
   */
  maxInFlight: number;
  /** Prometheus metrics at `GET /metrics` (and the Temporal SDK's own, appended). */
  metricsEnabled: boolean;
  /** Where the Temporal SDK core serves its Prometheus metrics (absent: a free loopback port). */
  temporalMetricsAddress?: string;
  /** A worker-only process serves /metrics on this port (absent: none). */
  workerMetricsPort?: number;
  /** When set, operator endpoints (/metrics) require `Authorization: Bearer <token>`. */
  operatorToken?: string;
  /** OTLP/HTTP collector base URL; set: OpenTelemetry tracing on (API -> workflow -> activity -> upstream). */
  otlpEndpoint?: string;
  otelServiceName: string;
}

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
    SMTP_URL: { type: 'string', pattern: '^smtps?://[^\\s]+$' },
    ALLOW_PRIVATE_WEBHOOKS: { enum: ['true', 'false', '1', '0'] },
    SMTP_FROM: { type: 'string', minLength: 3 },
    IP_RATE_LIMIT: { type: 'string', pattern: '^[0-9]+$' },
    GATEWAY_EAGER_START: { enum: ['true', 'false', '1', '0'] },
    GATEWAY_ACTIVITY_MODE: { enum: ['local', 'remote'] },
    GATEWAY_INPROCESS_RESULTS: { enum: ['true', 'false', '1', '0'] },
    GATEWAY_MAX_IN_FLIGHT: { type: 'string', pattern: '^[0-9]+$' },
    METRICS_ENABLED: { enum: ['true', 'false', '1', '0'] },
    TEMPORAL_METRICS_ADDRESS: { type: 'string', pattern: '^[^\\s:]+:[0-9]{1,5}$' },
    WORKER_METRICS_PORT: { type: 'string', pattern: '^[0-9]{1,5}$' },
    OPERATOR_TOKEN: { type: 'string', minLength: 16 },
    OTEL_EXPORTER_OTLP_ENDPOINT: { type: 'string', pattern: '^https?://' },
    OTEL_SERVICE_NAME: { type: 'string', minLength: 1 },
  },
  dependencies: {
    S3_ENDPOINT: ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_BUCKET'],
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
  const cacheDir = present.GATEWAY_CACHE_DIR ?? `${repoRoot}/.cache`;
  return {
    port: Number(present.PORT ?? 8080),
    host: present.HOST ?? '127.0.0.1',
    databaseUrl: present.DATABASE_URL,
    temporalAddress: present.TEMPORAL_ADDRESS,
    temporalNamespace: present.TEMPORAL_NAMESPACE ?? 'default',
    temporalUiUrl: present.TEMPORAL_UI_URL,
    temporalTaskQueue: present.TEMPORAL_TASK_QUEUE ?? 'gateway',
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
    smtpUrl: present.SMTP_URL,
    allowPrivateWebhooks: bool(present.ALLOW_PRIVATE_WEBHOOKS, false),
    smtpFrom: present.SMTP_FROM ?? 'Model Gateway <alerts@localhost>',
    ipRateLimit: Number(present.IP_RATE_LIMIT ?? 5000),
    eagerStart: bool(present.GATEWAY_EAGER_START, true),
    activityMode: (present.GATEWAY_ACTIVITY_MODE as 'local' | 'remote' | undefined) ?? 'local',
    inProcessResults: bool(present.GATEWAY_INPROCESS_RESULTS, true),
    maxInFlight: Number(present.GATEWAY_MAX_IN_FLIGHT ?? 128),
    metricsEnabled: bool(present.METRICS_ENABLED, true),
    temporalMetricsAddress: present.TEMPORAL_METRICS_ADDRESS,
    workerMetricsPort: present.WORKER_METRICS_PORT ? Number(present.WORKER_METRICS_PORT) : undefined,
    operatorToken: present.OPERATOR_TOKEN,
    otlpEndpoint: present.OTEL_EXPORTER_OTLP_ENDPOINT,
    otelServiceName: present.OTEL_SERVICE_NAME ?? 'model-gateway',
  };
}
