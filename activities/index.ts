/**
 * Every activity the worker registers, built from injected dependencies so tests can call the same
 * functions directly. Activities stay thin: the work lives in domain/ and providers/.
 */
import type { Knex } from 'knex';
import type { ModelCatalog } from '../domain/model-catalog';
import { createSystemActivities } from './system';

export interface ActivityDeps {
  db: Knex;
  catalog: ModelCatalog;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createSystemActivities(deps),
  };
}

export type GatewayActivities = ReturnType<typeof createActivities>;
