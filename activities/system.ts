import type { ActivityDeps } from './deps';

/** Activities that prove the path from API to worker to the stores and back. */
export function createSystemActivities(deps: Pick<ActivityDeps, 'db' | 'catalog'>) {
  return {
    async inspectStores(): Promise<{ databaseTime: string; models: number }> {
      const { rows } = await deps.db.raw('select now() as now');
      const models = (await deps.catalog.list()).length;
      return { databaseTime: new Date(rows[0].now).toISOString(), models };
    },
  };
}
