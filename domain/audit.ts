import type { Knex } from 'knex';

/** Appends to the audit log (who did what to which resource); the only place deleted records survive. */
export async function audit(db: Knex | Knex.Transaction, entry: { workspaceId: string | null; actor: string; action: string; subjectType: string; subjectId: string; data?: unknown }): Promise<void> {
  await db('audit_log').insert({
    workspace_id: entry.workspaceId,
    actor: entry.actor,
    action: entry.action,
    subject_type: entry.subjectType,
    subject_id: entry.subjectId,
    data: entry.data === undefined ? null : JSON.stringify(entry.data),
  });
}
