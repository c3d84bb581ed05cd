/**
 * Stored Responses, scoped to their workspace: the response object as answered, and its items in order
 * (the request's input items, then the output items). A conversation is the chain of responses linked by
 * `previous_response_id`; another workspace's response, a deleted one and one never stored all read as
 * missing, with the same 404.
 */
import type { Knex } from 'knex';
import { NotFoundError } from '../core/errors';

/** One item of a conversation (a message, a function call or its output), always with its id. */
export type ResponseItem = Record<string, unknown> & { id: string; type: string };

export interface ResponseToStore {
  workspaceId: string;
  /** The response object as the client got it. */
  response: Record<string, unknown> & { id: string; model: string; previous_response_id?: string | null };
  inputItems: ResponseItem[];
  outputItems: ResponseItem[];
}

export function responseNotFound(responseId: string, param: string | null = null): NotFoundError {
  return new NotFoundError(`Response with id '${responseId}' not found.`, { code: 'response_not_found', param });
}

export function itemNotFound(itemId: string, param: string | null = null): NotFoundError {
  return new NotFoundError(`Item with id '${itemId}' not found.`, { code: 'item_not_found', param });
}

/** Stores (or, for a retried call, replaces) one response and its items. */
export async function saveResponse(db: Knex, r: ResponseToStore): Promise<void> {
  const items = [
    ...r.inputItems.map((item) => ({ kind: 'input', item })),
    ...r.outputItems.map((item) => ({ kind: 'output', item })),
  ];
  await db.transaction(async (trx) => {
    await trx('responses').where({ id: r.response.id }).delete();
    await trx('responses').insert({
      id: r.response.id, workspace_id: r.workspaceId, previous_response_id: r.response.previous_response_id ?? null,
      model: r.response.model, response: JSON.stringify(r.response),
    });
    const rows = items.map(({ kind, item }, position) => ({
      response_id: r.response.id, position, workspace_id: r.workspaceId, item_id: item.id, kind, item: JSON.stringify(item),
    }));
    if (rows.length > 0) await trx.batchInsert('response_items', rows, 500);
  });
}

/** The workspace's stored response object, or null. */
export async function findResponse(db: Knex, workspaceId: string, responseId: string): Promise<Record<string, unknown> | null> {
  const row = await db('responses').where({ id: responseId, workspace_id: workspaceId }).first('response');
  return row ? (row.response as Record<string, unknown>) : null;
}

/** Deletes the workspace's response; false when it has none by that id. */
export async function deleteResponse(db: Knex, workspaceId: string, responseId: string): Promise<boolean> {
  return (await db('responses').where({ id: responseId, workspace_id: workspaceId }).delete()) > 0;
}

interface ChainItem {
  responseId: string;
  kind: 'input' | 'output';
  item: ResponseItem;
}

/**
 * Every item of the conversation that ends with this response, oldest first: each response's input items,
 * then its output items. Null when the workspace has no such response. A deleted response in the middle
 * ends the conversation there (the items before it are no longer kept together with it).
 */
async function chainItems(db: Knex, workspaceId: string, responseId: string): Promise<ChainItem[] | null> {
  const { rows } = await db.raw(
    `with recursive chain as (
       select id, previous_response_id, 0 as depth from responses where id = ? and workspace_id = ?
       union all
       select r.id, r.previous_response_id, c.depth + 1
         from responses r join chain c on r.id = c.previous_response_id
        where r.workspace_id = ? and c.depth < 10000
     )
     select c.id as response_id, i.kind, i.item
       from chain c left join response_items i on i.response_id = c.id
      order by c.depth desc, i.position asc`,
    [responseId, workspaceId, workspaceId],
  );
  if (rows.length === 0) return null;
  return (rows as Array<{ response_id: string; kind: 'input' | 'output' | null; item: ResponseItem | null }>)
    .filter((row) => row.item !== null)
    .map((row) => ({ responseId: row.response_id, kind: row.kind!, item: row.item! }));
}

/** What a request continuing after `responseId` starts from: the whole conversation so far. */
export async function conversationItems(db: Knex, workspaceId: string, responseId: string): Promise<ResponseItem[] | null> {
  const items = await chainItems(db, workspaceId, responseId);
  return items && items.map((i) => i.item);
}

export interface InputItemsQuery {
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
}

/**
 * The items the model was given for this response (earlier turns of the conversation included), as a
 * page; null when the workspace has no such response. `unknownCursor` when `after` names no item of it.
 */
export async function listInputItems(db: Knex, workspaceId: string, responseId: string, query: InputItemsQuery): Promise<{ items: ResponseItem[]; hasMore: boolean } | { unknownCursor: true } | null> {
  const chain = await chainItems(db, workspaceId, responseId);
  if (!chain) return null;
  const inputs = chain.filter((i) => !(i.responseId === responseId && i.kind === 'output')).map((i) => i.item);
  if (query.order === 'desc') inputs.reverse();
  let start = 0;
  if (query.after !== undefined) {
    const at = inputs.findIndex((item) => item.id === query.after);
    if (at < 0) return { unknownCursor: true };
    start = at + 1;
  }
  const items = inputs.slice(start, start + query.limit);
  return { items, hasMore: start + query.limit < inputs.length };
}

/** The workspace's stored items by id (any response holding the item will do: its content is the same). */
export async function findItems(db: Knex, workspaceId: string, itemIds: string[]): Promise<Map<string, ResponseItem>> {
  const found = new Map<string, ResponseItem>();
  if (itemIds.length === 0) return found;
  const rows = await db('response_items').where({ workspace_id: workspaceId }).whereIn('item_id', [...new Set(itemIds)]).select('item_id', 'item');
  for (const row of rows) found.set(row.item_id, row.item as ResponseItem);
  return found;
}
