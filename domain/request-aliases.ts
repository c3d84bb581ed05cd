/**
 * The names a request answers to at GET /v1/requests/{id} besides its own x-request-id, recorded before
 * anything is held or called (so a client that lost its answer, even to a crash, finds the request by the
 * id it sent): the client's own `X-Request-Id`, and the x-request-id an Idempotency-Key replay answered with
 * (it names the run it joined). 404 is then only for ids that never reached the gateway.
 */
import type { Knex } from 'knex';

export interface RequestAlias {
  /** Our x-request-id of the request the alias names, when known. */
  requestId: string | null;
  /** The run the alias names, when known (a replay's). */
  workflowId: string | null;
  createdAt: Date;
}

/** Records that `alias` names the request `requestId` and/or the run `workflowId` in the workspace. */
export async function recordRequestAlias(db: Knex, opts: { workspaceId: string; alias: string; requestId?: string | null; workflowId?: string | null }): Promise<void> {
  await db('request_aliases').insert({ workspace_id: opts.workspaceId, alias: opts.alias, request_id: opts.requestId ?? null, workflow_id: opts.workflowId ?? null });
}

/** What `alias` names in the workspace (the latest, when a client reused its id). */
export async function findRequestAlias(db: Knex, workspaceId: string, alias: string): Promise<RequestAlias | null> {
  const row = await db('request_aliases').where({ workspace_id: workspaceId, alias }).orderBy('id', 'desc').first('request_id', 'workflow_id', 'created_at');
  return row ? { requestId: row.request_id, workflowId: row.workflow_id, createdAt: new Date(row.created_at) } : null;
}
