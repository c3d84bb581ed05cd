/**
 * A suite's gateway whose provider is a FakeUpstream, with a copy of one of its models (`slug`) that has its
 * batches served on the provider's own batch API at half price; and the books a batch must leave closed.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import type { ModelRecord } from '../../catalog/types';
import { upsertOperatorModel } from '../../domain/model-catalog';
import { FakeUpstream } from './fake-upstream';
import { startTestGateway, type TestGateway } from './gateway';

export interface NativeBatchSuite {
  upstream: FakeUpstream;
  gateway: TestGateway;
  record: ModelRecord;
}

/** Adds `slug` to the gateway's catalog: a copy of `baseModel` whose batches its provider serves, at half price. */
export async function addNativeBatchModel(gateway: TestGateway, baseModel: string, slug: string): Promise<ModelRecord> {
  const base = await gateway.runtime.catalog.get(baseModel);
  if (!base) throw new Error(`no model ${baseModel} in the catalog`);
  const record: ModelRecord = { ...base, slug, aliases: undefined, pricing: { ...base.pricing, batchDiscount: 0.5 }, batch: { native: true } };
  await upsertOperatorModel(gateway.runtime.db, record);
  gateway.runtime.catalog.invalidate();
  return record;
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
