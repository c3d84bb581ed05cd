/**
 * Mocha root hooks. The shared local stack (Temporal dev server, MinIO, a fresh Postgres database) is
 * started lazily by the first test that asks for it (see ./stack) and stopped here once every test ran.
 */
import { stopSharedStack } from './stack';

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopSharedStack();
  },
};
