import type Koa from 'koa';
import type { RouterContext } from '@koa/router';
import type { Knex } from 'knex';
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { GatewayConfig } from '../../config/env';
import type { ModelCatalog } from '../../domain/model-catalog';
import type { Logger } from '../../core/log';
import type { ObjectStorage } from '../../infra/storage';
import type { AuthContext } from './auth';
import type { StreamRegistry } from '../../activities/stream-registry';
import type { ResultBroker } from '../../activities/result-broker';
import type { FirstHopStarter } from '../../activities';
import type { GatewayMetrics } from '../../infra/metrics';
import type { Tracing } from '../../infra/tracing';
import type { StripeClient } from '../../infra/stripe';
import type { WindowCounters, WindowHit } from '../../domain/rate-limits';
import type { Draining } from '../../infra/probes';
import type { WorkspaceProviderKeys } from '../../domain/provider-keys';

/** What the API needs from the outside world; tests build it from the real stack. */
export interface AppDeps {
  config: GatewayConfig;
  db: Knex;
  temporal: { client: Client; taskQueue: string };
  catalog: ModelCatalog;
  /** The window counters of every rate limit (Postgres, or Redis when configured), chosen in main/runtime.ts. */
  counters: WindowCounters;
  storage: ObjectStorage;
  log: Logger;
  /** This process's stream registry and the task queue its stream worker polls. */
  streaming: { registry: StreamRegistry; taskQueue: string; localWorker: boolean };
  /** Outcomes of workflows this process's own worker runs, handed over in-process (null: poll the server). */
  results: ResultBroker | null;
  /**
   * Begins a request's first hop while its run starts, for the hop's activity on this process's worker to
   * claim (activities/first-hop.ts); absent or null where runs do not start eagerly on this process.
   */
  firstHop?: FirstHopStarter | null;
  /** Workspaces' own provider keys (BYOK_KEY_RING); absent or null: BYOK is off and its routes answer 403 `byok_not_configured`. */
  providerKeys?: WorkspaceProviderKeys | null;
  /**
   * Whether a model's provider has credentials (models of unconfigured providers are reported unavailable), or
   * `modelId` is served by deployments of its own (providers/deployments.ts).
   */
  isProviderConfigured: (providerId: string, modelId?: string) => boolean;
  /**
   * The address people open, for links in e-mails: PUBLIC_URL, else (outside production) the address this
   * process listens on, known once it listens. Never a request's Host header.
   */
  publicUrl: () => string;
  /** The operators' codec endpoint: the payload codec it runs, and its bearer token (null: the endpoint is off). */
  operators: { codec: PayloadCodec; token: string | null };
  /** The payment processor's client (Stripe) when STRIPE_SECRET_KEY is set; absent or null: no self-serve top-ups. */
  payments?: { stripe: StripeClient } | null;
  /** This process's metrics (null: METRICS_ENABLED=false) and tracing (null: off). */
  metrics?: GatewayMetrics | null;
  tracing?: Tracing | null;
  /** Set once the process shuts down: /readyz answers 503 and new requests 503 `server_shutting_down` (api/http/drain.ts). */
  draining?: Draining;
}

export interface GatewayState extends Koa.DefaultState {
  requestId: string;
  startedAt: number;
  clientRequestId?: string;
  auth: AuthContext;
  /** Keeps this request's place in the in-flight bound after its answer, until `work` ends (api/http/admission.ts). */
  inFlightUntil?: (work: Promise<unknown>) => void;
  /** The key's requests-per-minute hit, when the authentication counted it with the key lookup (api/http/key-lookup.ts). */
  rpmHit?: WindowHit;
}

export type GatewayContext = RouterContext<GatewayState>;
