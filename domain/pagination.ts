/**
 * Keyset pages of a workspace's resources (files, video jobs), ordered by (created_at, id) so rows created
 * in the same microsecond still page stably. A cursor row deleted since the previous page keeps its place:
 * its exact creation time is read from the audit entry its deletion left.
 */
import type { Knex } from 'knex';

export interface PageQuery {
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
}

/** `created_at` to the microsecond, as text (a JS Date would drop the microseconds). */
export function exactCreatedAt(db: Knex | Knex.Transaction, alias = 'created_at_exact'): Knex.Raw {
  return db.raw(`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ??`, [alias]);
}

/** One page of `query` (already filtered to the workspace); null when the cursor names no row, live or deleted. */
export async function keysetPage<Row>(
  db: Knex, query: Knex.QueryBuilder, page: PageQuery, cursor: { table: string; workspaceId: string; deletedAction: string },
): Promise<{ rows: Row[]; hasMore: boolean } | null> {
  if (page.after) {
    const position = await cursorPosition(db, { ...cursor, id: page.after });
    if (!position) return null;
    const op = page.order === 'desc' ? '<' : '>';
    query.andWhereRaw(`(created_at, id) ${op} (?::timestamptz, ?)`, [position, page.after]);
  }
  const rows = await query.orderBy([{ column: 'created_at', order: page.order }, { column: 'id', order: page.order }]).limit(page.limit + 1);
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

async function cursorPosition(db: Knex, c: { table: string; workspaceId: string; deletedAction: string; id: string }): Promise<string | null> {
  const live = await db(c.table).where({ id: c.id, workspace_id: c.workspaceId }).first(exactCreatedAt(db));
  if (live) return live.created_at_exact;
  const deleted = await db('audit_log')
    .where({ workspace_id: c.workspaceId, action: c.deletedAction, subject_id: c.id })
    .first(db.raw(`data->>'created_at_exact' as created_at_exact`));
  return deleted?.created_at_exact ?? null;
}

/**
 * OpenAI's list object. An empty page names no ids: OpenAI's schema types `first_id` and `last_id` as
 * strings, so they are empty strings then (never null).
 */
export function listObject<T extends { id: string }>(data: T[], hasMore: boolean) {
  return { object: 'list' as const, data, first_id: data[0]?.id ?? '', last_id: data[data.length - 1]?.id ?? '', has_more: hasMore };
}
