/**
 * API files: workspace-scoped records in Postgres, bytes in object storage under `files/<workspace>/<file id>`
 * (never the client's filename). Storage use is the sum of a workspace's file sizes, API and Playground alike; the limit is the
 * workspace's own, else its plan's, else DEFAULT_STORAGE_LIMIT_BYTES. A deleted file's row is removed and
 * survives only in the audit log.
 */
import type { Knex } from 'knex';
import type { ObjectStorage } from '../infra/storage';
import { audit } from './audit';
import { exactCreatedAt, keysetPage } from './pagination';
import { NotFoundError, PayloadTooLargeError } from '../core/errors';

/** Purposes a client uploads with. */
export const FILE_PURPOSES = ['assistants', 'vision', 'user_data', 'batch'] as const;
/** Every purpose a file may have: the uploadable ones, and a batch's output and error files (written by the gateway). */
export const STORED_FILE_PURPOSES = [...FILE_PURPOSES, 'batch_output'] as const;
export type FilePurpose = (typeof STORED_FILE_PURPOSES)[number];

export const DEFAULT_STORAGE_LIMIT_BYTES = 1024 ** 3;

export interface FileRecord {
  id: string;
  workspaceId: string;
  filename: string;
  purpose: FilePurpose;
  bytes: number;
  contentType: string;
  storageKey: string;
  sha256: string | null;
  status: string;
  createdAt: Date;
}

/** The OpenAI file object. */
export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: FilePurpose;
  status: string;
}

export function fileStorageKey(workspaceId: string, fileId: string): string {
  return `files/${workspaceId}/${fileId}`;
}

/** Whether a client may upload with this purpose. */
export function isFilePurpose(value: unknown): value is FilePurpose {
  return typeof value === 'string' && (FILE_PURPOSES as readonly string[]).includes(value);
}

export function isStoredFilePurpose(value: unknown): value is FilePurpose {
  return typeof value === 'string' && (STORED_FILE_PURPOSES as readonly string[]).includes(value);
}

export function toFileObject(file: FileRecord): FileObject {
  return {
    id: file.id, object: 'file', bytes: file.bytes, created_at: Math.floor(file.createdAt.getTime() / 1000),
    filename: file.filename, purpose: file.purpose, status: file.status,
  };
}

function toRecord(row: Record<string, any>): FileRecord {
  return {
    id: row.id, workspaceId: row.workspace_id, filename: row.filename, purpose: row.purpose, bytes: Number(row.bytes),
    contentType: row.content_type, storageKey: row.storage_key, sha256: row.sha256, status: row.status, createdAt: new Date(row.created_at),
  };
}

/** The same 404 whether the file never existed, was deleted, or belongs to another workspace. */
export function fileNotFound(fileId: string, param: string | null = null): NotFoundError {
  return new NotFoundError(`No such File object: ${fileId}`, { code: 'file_not_found', param });
}

export interface StorageUsage {
  usedBytes: number;
  limitBytes: number;
  /** Of `usedBytes`, what the Playground holds (its files, and the videos of its video messages). */
  playgroundBytes: number;
}

/**
 * One storage for the workspace: API files and Playground files (uploads, project files, generated images,
 * audio and the videos of video messages) count against the same limit.
 */
export async function storageUsage(db: Knex | Knex.Transaction, workspaceId: string): Promise<StorageUsage> {
  const { rows } = await db.raw(
    `select coalesce(w.storage_limit_bytes, p.storage_limit_bytes) as limit_bytes,
            (select coalesce(sum(f.bytes), 0) from files f where f.workspace_id = w.id)::bigint as api_bytes,
            (select coalesce(sum(pf.bytes), 0) from playground_files pf where pf.workspace_id = w.id)::bigint
            + (select coalesce(sum((v->>'bytes')::bigint), 0)
                 from playground_chats c
                 -- until its video is copied into the chat's files (then the copy counts, once)
                 join playground_messages m on m.chat_id = c.id and m.kind = 'video' and m.files = '[]'::jsonb
                 join video_jobs j on j.id = m.request_id and j.workspace_id = c.workspace_id
                 cross join lateral jsonb_array_elements(coalesce(j.result->'videos', '[]'::jsonb)) v
                where c.workspace_id = w.id)::bigint as playground_bytes
       from workspaces w left join plans p on p.id = w.plan_id
      where w.id = ?`,
    [workspaceId],
  );
  const row = rows[0];
  const playgroundBytes = Number(row?.playground_bytes ?? 0);
  return {
    usedBytes: Number(row?.api_bytes ?? 0) + playgroundBytes, playgroundBytes,
    limitBytes: row?.limit_bytes == null ? DEFAULT_STORAGE_LIMIT_BYTES : Number(row.limit_bytes),
  };
}

export function storageLimitExceeded(usage: StorageUsage, incomingBytes: number | null): PayloadTooLargeError {
  const left = Math.max(0, usage.limitBytes - usage.usedBytes);
  const size = incomingBytes === null ? 'This upload' : `This file (${incomingBytes} bytes)`;
  return new PayloadTooLargeError(
    `${size} does not fit in the workspace's storage: ${usage.usedBytes} of ${usage.limitBytes} bytes are used, ${left} left. Delete files or raise the limit.`,
    { code: 'storage_limit_exceeded' },
  );
}

export interface NewFile {
  id: string;
  workspaceId: string;
  filename: string;
  purpose: FilePurpose;
  bytes: number;
  contentType: string;
  storageKey: string;
  sha256: string;
  createdByKeyId: string | null;
  /** Recorded even past the storage limit (a batch's results, already paid for); it counts all the same. */
  pastLimit?: boolean;
}

/**
 * Records a file whose bytes are already stored, in one transaction that locks the workspace row, so two
 * concurrent uploads cannot both pass the storage limit. `withinTransaction` runs before the insert (the
 * idempotency claim is completed there). Throws PayloadTooLargeError when the file does not fit; the
 * caller then deletes the stored object.
 */
export async function commitFile(db: Knex, file: NewFile & { actor: string }, withinTransaction?: (trx: Knex.Transaction) => Promise<void>): Promise<FileRecord> {
  return db.transaction(async (trx) => {
    await trx.raw('select id from workspaces where id = ? for update', [file.workspaceId]);
    const usage = await storageUsage(trx, file.workspaceId);
    if (!file.pastLimit && usage.usedBytes + file.bytes > usage.limitBytes) throw storageLimitExceeded(usage, file.bytes);
    if (withinTransaction) await withinTransaction(trx);
    const [row] = await trx('files').insert({
      id: file.id, workspace_id: file.workspaceId, filename: file.filename, purpose: file.purpose, bytes: file.bytes,
      content_type: file.contentType, storage_key: file.storageKey, sha256: file.sha256, status: 'processed', created_by_key_id: file.createdByKeyId,
    }, '*');
    const record = toRecord(row);
    await audit(trx, {
      workspaceId: file.workspaceId, actor: file.actor, action: 'file.create', subjectType: 'file', subjectId: file.id,
      data: { filename: file.filename, purpose: file.purpose, bytes: file.bytes, content_type: file.contentType, sha256: file.sha256 },
    });
    return record;
  });
}

export async function findFile(db: Knex | Knex.Transaction, workspaceId: string, fileId: string): Promise<FileRecord | null> {
  const row = await db('files').where({ id: fileId, workspace_id: workspaceId }).first();
  return row ? toRecord(row) : null;
}

export async function getFile(db: Knex, workspaceId: string, fileId: string): Promise<FileRecord> {
  const file = await findFile(db, workspaceId, fileId);
  if (!file) throw fileNotFound(fileId);
  return file;
}

/** The workspace's files among `ids` (others' and missing ids are simply absent). */
export async function findFiles(db: Knex, workspaceId: string, ids: string[]): Promise<Map<string, FileRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await db('files').where({ workspace_id: workspaceId }).whereIn('id', [...new Set(ids)]);
  return new Map(rows.map((row) => [row.id as string, toRecord(row)]));
}

export interface ListFilesQuery {
  limit: number;
  order: 'asc' | 'desc';
  purpose?: FilePurpose;
  /** Cursor: the id of the last file of the previous page. */
  after?: string;
}

export interface FilePage {
  files: FileRecord[];
  hasMore: boolean;
}

/** One page (see domain/pagination.ts: a deleted cursor file keeps its place). */
export async function listFiles(db: Knex, workspaceId: string, query: ListFilesQuery): Promise<FilePage | { unknownCursor: true }> {
  const q = db('files').where({ workspace_id: workspaceId });
  if (query.purpose) q.andWhere({ purpose: query.purpose });
  const page = await keysetPage<Record<string, any>>(db, q, query, { table: 'files', workspaceId, deletedAction: 'file.delete' });
  if (!page) return { unknownCursor: true };
  return { files: page.rows.map(toRecord), hasMore: page.hasMore };
}

/**
 * Deletes a file: the bytes go from object storage at once (while the row is locked, so a failed storage
 * call leaves everything as it was), then the row goes and the audit log keeps the record.
 */
export async function deleteFile(db: Knex, storage: ObjectStorage, opts: { workspaceId: string; fileId: string; actor: string }): Promise<void> {
  await db.transaction(async (trx) => {
    const row = await trx('files').where({ id: opts.fileId, workspace_id: opts.workspaceId }).forUpdate().first('*', exactCreatedAt(trx));
    if (!row) throw fileNotFound(opts.fileId);
    const file = toRecord(row);
    await storage.delete(file.storageKey);
    await trx('files').where({ id: file.id }).delete();
    await audit(trx, {
      workspaceId: opts.workspaceId, actor: opts.actor, action: 'file.delete', subjectType: 'file', subjectId: file.id,
      data: { ...toFileObject(file), content_type: file.contentType, sha256: file.sha256, storage_key: file.storageKey, created_at_exact: row.created_at_exact },
    });
  });
}
