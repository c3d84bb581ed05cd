/**
 * A stream's running usage kept in Postgres (db/migrations/20261226000000_stream_progress.ts): a stream
 * served as a local activity cannot heartbeat, so it writes here at most once a second instead, and a run
 * whose stream process died bills what the last write says.
 */
import type { Knex } from 'knex';

export interface StreamProgressRecord {
  inputTokens: number;
  outputChars: number;
}

export async function recordStreamProgress(db: Knex, reservationId: string, progress: StreamProgressRecord): Promise<void> {
  await db.raw(
    `insert into stream_progress (reservation_id, input_tokens, output_chars) values (?, ?, ?)
     on conflict (reservation_id) do update set input_tokens = excluded.input_tokens, output_chars = excluded.output_chars, updated_at = now()`,
    [reservationId, progress.inputTokens, progress.outputChars],
  );
}

export async function readStreamProgress(db: Knex, reservationId: string): Promise<StreamProgressRecord | null> {
  const row = await db('stream_progress').where({ reservation_id: reservationId }).first('input_tokens', 'output_chars');
  return row ? { inputTokens: Number(row.input_tokens), outputChars: Number(row.output_chars) } : null;
}

/** Drops a stream's row once its usage is settled (what it said is in the books now). */
export async function forgetStreamProgress(db: Knex, reservationId: string): Promise<void> {
  await db('stream_progress').where({ reservation_id: reservationId }).delete();
}

/**
 * Drops the rows of streams whose hold has ended (settled or given back) and that were last written more
 * than `olderThanSeconds` ago: a stream whose process died leaves its row, which its run bills from and no
 * one reads after. Returns how many went. Called by the hold sweeper (activities/holds.ts).
 */
export async function pruneStreamProgress(db: Knex, olderThanSeconds: number): Promise<number> {
  const { rowCount } = await db.raw(
    `delete from stream_progress p
      where p.updated_at < now() - make_interval(secs => ?)
        and not exists (select 1 from reservations r where r.id = p.reservation_id and r.status = 'held')`,
    [olderThanSeconds],
  );
  return rowCount ?? 0;
}

/**
 * Writes a stream's progress at most every `everyMs` (the first write `everyMs` after the stream began, so a
 * short stream writes nothing), one write at a time; a failed write is dropped (the next one catches up).
 */
export function throttledProgressWriter(write: (progress: StreamProgressRecord) => Promise<void>, everyMs = 1_000, now = () => Date.now()) {
  let last = now();
  let writing = false;
  let wrote = false;
  return {
    report(progress: StreamProgressRecord): void {
      if (writing || now() - last < everyMs) return;
      writing = true;
      last = now();
      void write(progress).then(() => { wrote = true; }, () => undefined).finally(() => { writing = false; });
    },
    /** Whether anything was written (a row to forget once the stream settled). */
    get wrote(): boolean {
      return wrote || writing;
    },
  };
}
