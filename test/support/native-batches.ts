/**
 * A suite's gateway whose provider is a FakeUpstream, with a copy of one of its models (`slug`) that has its
 * batches served on the provider's own batch API at half price; and the books a batch must leave closed.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import { batchCharge, chatCost } from '../../catalog/pricing';
import type { ModelRecord } from '../../catalog/types';
import { upsertOperatorModel } from '../../domain/model-catalog';
import { FakeUpstream } from './fake-upstream';
import { startTestGateway, type TestGateway } from './gateway';

export interface NativeBatchSuite {
  upstream: FakeUpstream;
  gateway: TestGateway;
  record: ModelRecord;
}

/** A copy of `base` named `slug` whose batches are served on its provider's batch API at half price. */
export function nativeBatchRecord(base: ModelRecord, slug: string): ModelRecord {
  return { ...base, slug, aliases: undefined, pricing: { ...base.pricing, batchDiscount: 0.5 }, batch: { native: true } };
}

/** Adds `slug` to the gateway's catalog: a copy of `baseModel` whose batches its provider serves, at half price. */
export async function addNativeBatchModel(gateway: TestGateway, baseModel: string, slug: string): Promise<ModelRecord> {
  const base = await gateway.runtime.catalog.get(baseModel);
  if (!base) throw new Error(`no model ${baseModel} in the catalog`);
  const record = nativeBatchRecord(base, slug);
  await upsertOperatorModel(gateway.runtime.db, record);
  gateway.runtime.catalog.invalidate();
  return record;
}

/** What chat lines of these prompts cost at `record`'s batch price, each answered by `echoAnswer` (test/support/fake-openai-batches.ts). */
export function echoedCharges(record: ModelRecord, prompts: string[]): number {
  return prompts.reduce((sum, p) => sum + batchCharge(record, chatCost(record, { inputTokens: 10 * p.split(' ').length, outputTokens: 7 })), 0);
}

export function useNativeBatchGateway(opts: { env: (upstreamUrl: string) => NodeJS.ProcessEnv; baseModel: string; slug: string }): NativeBatchSuite {
  const suite = { upstream: new FakeUpstream() } as NativeBatchSuite;
  before(async function () {
    this.timeout(180_000);
    await suite.upstream.start();
    suite.gateway = await startTestGateway({ env: opts.env(suite.upstream.url) });
    suite.record = await addNativeBatchModel(suite.gateway, opts.baseModel, opts.slug);
  });
  after(async () => {
    await suite.gateway?.runtime.db('models').where({ slug: opts.slug }).delete();
    await suite.gateway?.stop();
    await suite.upstream.stop();
  });
  beforeEach(() => suite.upstream.reset());
  return suite;
}

/** No hold is left, and the ledger took exactly what the usage records say; what was spent. */
export async function expectBooksClosed(db: Knex, workspaceId: string): Promise<number> {
  expect(await db('reservations').where({ workspace_id: workspaceId, status: 'held' })).to.deep.equal([]);
  const usage = await db('usage_records').where({ workspace_id: workspaceId }).sum<{ sum: string }[]>('credits_micro as sum');
  const ledger = await db('credit_ledger').where({ workspace_id: workspaceId }).whereNotNull('reservation_id').sum<{ sum: string }[]>('amount_micro as sum');
  const spent = Number(usage[0].sum ?? 0);
  expect(-Number(ledger[0].sum ?? 0) || 0).to.equal(spent);
  return spent;
}

/**
 * The store refuses, once, the step that keeps a provider batch's id on our batch (as a database that fails
 * just after the provider answered would); the returned function puts the store back as it was.
 */
export async function failKeepingUpstreamIdOnce(db: Knex): Promise<() => Promise<void>> {
  await db.raw(`
    CREATE SEQUENCE test_keep_upstream_id_failures;
    CREATE FUNCTION test_keep_upstream_id_fails() RETURNS trigger AS $$
    BEGIN
      IF NEW.native->>'upstreamId' IS NOT NULL AND OLD.native->>'upstreamId' IS NULL AND nextval('test_keep_upstream_id_failures') = 1 THEN
        RAISE EXCEPTION 'the store is unavailable';
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER test_keep_upstream_id_fails BEFORE UPDATE ON batches FOR EACH ROW EXECUTE FUNCTION test_keep_upstream_id_fails();`);
  return async () => {
    await db.raw(`
      DROP TRIGGER test_keep_upstream_id_fails ON batches;
      DROP FUNCTION test_keep_upstream_id_fails();
      DROP SEQUENCE test_keep_upstream_id_failures;`);
  };
}
