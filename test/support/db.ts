/** A knex handle on the shared test database, migrated and seeded like a real start. */
import { createDb, type Db } from '../../db/connection';
import { prepareDatabase } from '../../domain/database-setup';
import { getSharedStack } from './stack';

export async function openTestDb(): Promise<Db> {
  const stack = await getSharedStack();
  const db = createDb(stack.databaseUrl, { poolMax: 30, applicationName: 'gateway-test' });
  await prepareDatabase(db);
  return db;
}
