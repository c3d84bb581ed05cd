import { expect } from 'chai';
import type { Db } from '../../db/connection';
import { reserve, settle } from '../../domain/ledger';
import { USAGE_RECORD_FIELDS, type UsageRecord } from '../../domain/usage-record';
import { createApiKey, createWorkspace } from '../../domain/workspaces';
import { openTestDb } from '../support/db';

describe('usage record crossing into the database', function () {
  this.timeout(120_000);
  let db: Db;
  before(async () => { db = await openTestDb(); });
  after(() => db?.destroy());

  it('names the same fields as the record gateway_record_usage reads', async () => {
    const { rows } = await db.raw(`select pg_get_functiondef('gateway_record_usage(jsonb, bigint)'::regprocedure) as def`);
    const def = String(rows[0].def);
    const recordColumns = /jsonb_to_record\(p_usage\) as x\(([^;]*?)\);/s.exec(def)?.[1];
    expect(recordColumns, 'the function reads the usage with jsonb_to_record').to.be.a('string');
    const sqlFields = recordColumns!.split(',').map((c) => c.trim().split(/\s+/)[0].replace(/"/g, ''));
    expect([...sqlFields].sort()).to.deep.equal([...USAGE_RECORD_FIELDS].sort());
  });

  it('stores every field of a settled request', async () => {
    const ws = (await createWorkspace(db, { name: 'usage-shape', credits: 5, actor: 'test' })).id;
    const key = await createApiKey(db, { workspaceId: ws, name: 'usage', actor: 'test' });
    const requestId = `req_usage_${ws}`;
    const usage: Required<UsageRecord> = {
      requestId, workspaceId: ws, apiKeyId: key.id, endpoint: 'chat.completions', modelRequested: 'sim-chat', modelUsed: 'sim-chat-2',
      fallbackDepth: 1, status: 'succeeded', inputTokens: 11, outputTokens: 7, units: { images: 2 }, clientRequestId: 'client-1',
      errorCode: 'none', latencyMs: 42, userId: 'user_usage_shape', batchId: 'batch_usage_shape', batchCustomId: 'line-1',
    };
    await reserve(db, { reservationId: `${requestId}:1`, workspaceId: ws, apiKeyId: key.id, amountMicro: 1_000_000, requestId });
    await settle(db, { reservationId: `${requestId}:1`, chargeMicro: 1_500, model: 'sim-chat-2', usage });
    const row = await db('usage_records').where({ request_id: requestId }).first();
    expect({
      requestId: row.request_id, workspaceId: row.workspace_id, apiKeyId: row.api_key_id, endpoint: row.endpoint,
      modelRequested: row.model_requested, modelUsed: row.model_used, fallbackDepth: row.fallback_depth, status: row.status,
      inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens), units: row.units, clientRequestId: row.client_request_id,
      errorCode: row.error_code, latencyMs: row.latency_ms, userId: row.user_id, batchId: row.batch_id, batchCustomId: row.batch_custom_id,
    }).to.deep.equal(usage);
    expect(Number(row.credits_micro)).to.equal(1_500);
  });
});
