/** What every activity is built from (injected, so tests call the same functions directly). */
import type { Knex } from 'knex';
import type { ModelCatalog } from '../domain/model-catalog';
import type { ObjectStorage } from '../infra/storage';
import type { ProviderRegistry } from '../providers/registry';
import type { WorkspaceProviderKeys } from '../domain/provider-keys';
import type { ActivityObserver } from './failure-policy';
import type { ResultBroker } from './result-broker';
import type { FirstHops } from './first-hop';
import type { Client } from '@temporalio/client';
import type { PaymentsConfig } from '../config/env';
import type { StripeClient } from '../infra/stripe';

export interface ActivityDeps {
  db: Knex;
  catalog: ModelCatalog;
  storage: ObjectStorage;
  providers: ProviderRegistry;
  /** Workspaces' own provider keys (BYOK); absent: every call goes through `providers`, the platform's keys. */
  providerKeys?: WorkspaceProviderKeys;
  /**
   * Where budget alert e-mails go out (absent: e-mail alerts retry until SMTP is configured), and how long a
   * delivery retries before it is given up (default DEFAULT_DELIVERY_GIVE_UP_MS).
   */
  notifications?: { smtpUrl: string | null; emailFrom: string; allowPrivateWebhooks?: boolean; deliveryGiveUpMs?: number };
  /** The activities' clock (tests inject one); defaults to the system clock. */
  clock?: () => Date;
  /**
   * The task queue budget watchers run on: the gateway's own, also when the settling activity runs on an API
   * process's stream queue (which ends with that process). Absent: the settling activity's queue.
   */
  watcherTaskQueue?: string;
  /** Sees every activity failure (the process's metrics). */
  observer?: ActivityObserver;
  /** An API in this process waiting for its requests' answers (eager start puts their runs here). */
  results?: ResultBroker;
  /** First hops an API in this process began while their runs started; their hop activities claim them. */
  firstHops?: FirstHops;
  /**
   * The client budget watchers are signalled with outside an activity (a first hop settled before its
   * activity claimed it); inside one, the activity's own.
   */
  watcherClient?: Client;
  /** The payment processor (automatic top-ups); absent: none configured. `publicUrl` makes the Billing link in e-mails. */
  payments?: { stripe: StripeClient; config: PaymentsConfig; publicUrl?: string };
}
