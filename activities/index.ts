/**
 * Every activity the worker registers, built from injected dependencies so tests can call the same
 * functions directly. Activities stay thin: the work lives in domain/ and providers/.
 */
import type { Knex } from 'knex';
import type { ModelCatalog } from '../domain/model-catalog';
import type { ObjectStorage } from '../lib/storage';
import type { ProviderRegistry } from '../providers/registry';
import { createRequestActivities } from './requests';
import { createStreamActivities as createChatStreamActivities } from './stream-chat';
import { createImageStreamActivities } from './stream-images';
import type { StreamRegistry } from '../api/streaming/registry';
import { createSystemActivities } from './system';
import { createBillingActivities } from './billing';
import { createBudgetActivities } from './budget';
import { createVideoActivities } from './videos';

export interface ActivityDeps {
  db: Knex;
  catalog: ModelCatalog;
  storage: ObjectStorage;
  providers: ProviderRegistry;
  /** Where budget alert e-mails go out (absent: e-mail alerts retry until SMTP is configured). */
  notifications?: { smtpUrl: string | null; emailFrom: string; allowPrivateWebhooks?: boolean };
  /** The activities' clock (tests inject one); defaults to the system clock. */
  clock?: () => Date;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createSystemActivities(deps),
    ...createRequestActivities(deps),
    ...createBillingActivities(deps),
    ...createBudgetActivities(deps),
    ...createVideoActivities(deps),
  };
}

export type GatewayActivities = ReturnType<typeof createActivities>;

/** Activities of the per-API-process stream worker (they write to connections this process holds). */
export function createStreamActivities(deps: ActivityDeps & { streams: StreamRegistry }) {
  return { ...createChatStreamActivities(deps), ...createImageStreamActivities(deps) };
}

export type StreamActivities = ReturnType<typeof createStreamActivities>;
