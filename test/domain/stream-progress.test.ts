import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connection';
import { forgetStreamProgress, readStreamProgress, recordStreamProgress, throttledProgressWriter } from '../../domain/stream-progress';
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
