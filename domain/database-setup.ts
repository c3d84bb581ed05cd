/** Migrations, plans and the catalog: idempotent, safe from several processes at once. */
import { loadCatalogFiles } from '../catalog/load';
import { migrate, type Db } from '../db/connection';
import { seedPlans } from '../db/seeds/plans';
import { seedCatalog } from './model-catalog';

/** Returns the migrations it applied (none when the schema was current). */
export async function prepareDatabase(db: Db): Promise<{ migrationsApplied: string[] }> {
  const migrationsApplied = await migrate(db);
  await seedPlans(db);
  await seedCatalog(db, loadCatalogFiles());
  return { migrationsApplied };
}
