/**
 * A batch served on its provider's own batch API (docs/batches.md): which provider and model serve it, and
 * the provider's batch once submitted. Its lines stay `pending` until their outcome is recorded
 * (domain/batches.ts `recordLine`): they hold no room in the workspace's line concurrency, which counts
 * the lines the gateway serves itself.
 */
import type { Knex } from 'knex';

export interface NativeBatch {
  provider: string;
  model: string;
  /** The provider's batch id, once submitted. */
  upstreamId: string | null;
}

/** The one model every line of the batch names, or null when they name several. */
export async function soleModelOf(db: Knex, batchId: string): Promise<string | null> {
  const rows = await db('batch_lines').where({ batch_id: batchId }).distinct('model').limit(2);
  return rows.length === 1 ? rows[0].model : null;
}

export async function findNativeBatch(db: Knex, batchId: string): Promise<NativeBatch | null> {
  const row = await db('batches').where({ id: batchId }).first('native');
  return row?.native ?? null;
}

export async function saveNativeBatch(db: Knex, batchId: string, native: NativeBatch): Promise<void> {
  await db('batches').where({ id: batchId }).update({ native: JSON.stringify(native) });
}

export interface WaitingLine {
  index: number;
  customId: string;
  body: unknown;
}

/** The lines without an outcome yet, in input order, a page at a time. */
export async function* waitingLines(db: Knex, batchId: string, pageSize = 500): AsyncGenerator<WaitingLine> {
  for (let after = -1; ;) {
    const rows = await db('batch_lines').where({ batch_id: batchId, status: 'pending' }).andWhere('line_index', '>', after)
      .orderBy('line_index').limit(pageSize).select('line_index', 'custom_id', 'body');
    if (rows.length === 0) return;
    for (const r of rows) yield { index: r.line_index, customId: r.custom_id, body: r.body };
    after = rows[rows.length - 1].line_index;
  }
}
