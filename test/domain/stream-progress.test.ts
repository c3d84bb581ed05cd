import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connection';
import { forgetStreamProgress, pruneStreamProgress, readStreamProgress, recordStreamProgress, throttledProgressWriter } from '../../domain/stream-progress';
import { createWorkspace } from '../../domain/workspaces';
import { reserve } from '../../domain/ledger';
import { openTestDb } from '../support/db';

describe('stream progress kept in Postgres (streams served as local activities)', () => {
  let db: Db;
  before(async function () {
    this.timeout(120_000);
    db = await openTestDb();
  });
  after(() => db?.destroy());

  it('keeps the latest progress of a hop, reads it back, and forgets it once the stream settled', async () => {
    const reservationId = `req-${randomUUID()}:0`;
    expect(await readStreamProgress(db, reservationId)).to.equal(null);
    await recordStreamProgress(db, reservationId, { inputTokens: 12, outputChars: 40 });
    await recordStreamProgress(db, reservationId, { inputTokens: 12, outputChars: 95 });
    expect(await readStreamProgress(db, reservationId)).to.deep.equal({ inputTokens: 12, outputChars: 95 });
    await forgetStreamProgress(db, reservationId);
    expect(await readStreamProgress(db, reservationId)).to.equal(null);
  });

  it('prunes the rows left by streams whose hold ended, once old enough, and keeps those of holds still held', async () => {
    const ws = await createWorkspace(db, { name: 'progress', credits: 1, actor: 'test' });
    const [held, ended, orphan] = [`req-${randomUUID()}:0`, `req-${randomUUID()}:0`, `req-${randomUUID()}:0`];
    await reserve(db, { reservationId: held, workspaceId: ws.id, amountMicro: 10 });
    await reserve(db, { reservationId: ended, workspaceId: ws.id, amountMicro: 10 });
    await db('reservations').where({ id: ended }).update({ status: 'released' });
    for (const id of [held, ended, orphan]) await recordStreamProgress(db, id, { inputTokens: 1, outputChars: 2 });
    // Too recent: nothing goes yet.
    await pruneStreamProgress(db, 3600);
    expect(await readStreamProgress(db, ended)).to.not.equal(null);
    await db('stream_progress').whereIn('reservation_id', [held, ended, orphan]).update({ updated_at: db.raw("now() - interval '2 hours'") });
    await pruneStreamProgress(db, 3600);
    expect(await readStreamProgress(db, held)).to.deep.equal({ inputTokens: 1, outputChars: 2 });
    expect(await readStreamProgress(db, ended)).to.equal(null);
    expect(await readStreamProgress(db, orphan)).to.equal(null);
  });

  it('writes at most once a period, none in the first (a short stream writes nothing), one write at a time', async () => {
    let now = 0;
    const written: number[] = [];
    let finish: () => void = () => undefined;
    const writer = throttledProgressWriter(async (p) => { written.push(p.outputChars); await new Promise<void>((r) => { finish = r; }); }, 1_000, () => now);
    const report = (outputChars: number) => writer.report({ inputTokens: 1, outputChars });
    report(10);
    now = 999;
    report(20);
    expect(written).to.deep.equal([]);
    expect(writer.wrote).to.equal(false);
    now = 1_000;
    report(30);
    now = 2_500;
    report(40); // the first write is still under way
    expect(written).to.deep.equal([30]);
    expect(writer.wrote).to.equal(true);
    finish();
    await new Promise((r) => setImmediate(r));
    report(50);
    expect(written).to.deep.equal([30, 50]);
  });
});
