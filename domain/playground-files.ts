/**
 * Playground files in the workspace's storage, and who reads them.
 *
 * Storage: every Playground file (message attachments, project files, generated images and audio) and the
 * video of every video message counts in the same storage as API files (domain/files.ts `storageUsage`).
 * An upload takes the same lock on the workspace row as an API upload, so the two cannot both pass the
 * limit, and is refused with the same `storage_limit_exceeded`. A generation is refused before it runs when
 * the storage is already full; once paid for, its output is always kept (it may take the usage over the
 * limit, and uploads are refused until space is freed). Deleting a file, a chat or a project deletes its
 * objects and gives the space back.
 *
 * Reading: a chat's file is read by exactly those who can read the chat. A project's file is read by the
 * project's owner and by whoever can read at least one chat of the project (its files are offered to every
 * chat there, so whoever reads one of those chats may see what the model could be given); to anyone else
 * it does not exist (404).
 */
import type { Knex } from 'knex';
import type { ObjectStorage } from '../infra/storage';
import { NotFoundError } from '../core/errors';
import { storageLimitExceeded, storageUsage } from './files';
import { addFile, fileRecord, listChats, projectFor, toPlaygroundFile, type Chat, type PlaygroundFile, type Project, type Reader } from './playground';
import { deleteFinishedVideoJob } from './video-jobs';

/** Stores an upload of a chat or a project if it fits in the workspace's storage (else storage_limit_exceeded). */
export async function storeUpload(
  db: Knex, storage: ObjectStorage, owner: { workspaceId: string; userId: string; chatId?: string; projectId?: string },
  file: { filename: string; contentType: string; data: Buffer },
): Promise<PlaygroundFile> {
  return db.transaction(async (trx) => {
    await trx.raw('select id from workspaces where id = ? for update', [owner.workspaceId]);
    const usage = await storageUsage(trx, owner.workspaceId);
    if (usage.usedBytes + file.data.length > usage.limitBytes) throw storageLimitExceeded(usage, file.data.length);
    const record = await addFile(trx, { ...owner, filename: file.filename, contentType: file.contentType, bytes: file.data.length });
    // Stored while the row is locked: a failed put rolls the record back.
    await storage.put(record.storageKey, file.data, { contentType: file.contentType, contentLength: file.data.length });
    return record;
  });
}

/** A generation keeps what it made whatever the size, so it may start only while some storage is left. */
export async function assertStorageLeft(db: Knex, workspaceId: string): Promise<void> {
  const usage = await storageUsage(db, workspaceId);
  if (usage.usedBytes >= usage.limitBytes) throw storageLimitExceeded(usage, null);
}

/** The project if `reader` owns it or can read one of its chats; 404 otherwise. */
export async function readableProject(db: Knex, reader: Reader, projectId: string): Promise<Project & { owned: boolean }> {
  const row = await db('playground_projects').where({ id: projectId, workspace_id: reader.workspaceId }).first('user_id');
  if (row && row.user_id === reader.userId) return { ...(await projectFor(db, reader, projectId)), owned: true };
  if (row && (await listChats(db, reader, { projectId })).length > 0) return { ...(await projectFor(db, { ...reader, userId: row.user_id }, projectId)), owned: false };
  throw new NotFoundError(`No project with id '${projectId}'.`, { code: 'project_not_found' });
}

export async function filesOfProject(db: Knex, projectId: string): Promise<PlaygroundFile[]> {
  return (await db('playground_files').where({ project_id: projectId }).orderBy('created_at')).map(toPlaygroundFile);
}

/** The files a message of `chat` may carry: the chat's own and its project's. */
export async function filesForChat(db: Knex, chat: Chat): Promise<Map<string, PlaygroundFile>> {
  const q = db('playground_files').where({ chat_id: chat.id });
  if (chat.projectId) q.orWhere({ project_id: chat.projectId });
  return new Map((await q).map((r) => [r.id as string, toPlaygroundFile(r)]));
}

/** The file if `reader` may read it (see the rule above); the same 404 otherwise. */
export async function readableFile(db: Knex, reader: Reader, fileId: string, chatFor: (chatId: string) => Promise<unknown>): Promise<PlaygroundFile> {
  const file = await fileRecord(db, reader.workspaceId, fileId);
  const readable = file.projectId ? readableProject(db, reader, file.projectId) : chatFor(file.chatId as string);
  await readable.catch(() => { throw new NotFoundError(`No file with id '${file.id}'.`, { code: 'file_not_found' }); });
  return file;
}

/** Deletes the files' objects, then their records; the messages that carried them no longer list them. */
export async function deleteFiles(db: Knex, storage: ObjectStorage, files: PlaygroundFile[]): Promise<void> {
  for (const file of files) {
    await storage.delete(file.storageKey);
    await db.raw('update playground_messages set files = files - ?::text where files @> ?::jsonb', [file.id, JSON.stringify([file.id])]);
  }
  if (files.length) await db('playground_files').whereIn('id', files.map((f) => f.id)).delete();
}

/** A chat with its files and the finished videos of its video messages (a job still running is left to finish). */
export async function deleteChat(db: Knex, storage: ObjectStorage, chat: Chat, actor: string): Promise<void> {
  await deleteFiles(db, storage, (await db('playground_files').where({ chat_id: chat.id })).map(toPlaygroundFile));
  const jobs = await db('playground_messages').where({ chat_id: chat.id, kind: 'video' }).whereNotNull('request_id').pluck('request_id');
  for (const jobId of jobs) await deleteFinishedVideoJob(db, storage, { workspaceId: chat.workspaceId, jobId, actor });
  await db('playground_chats').where({ id: chat.id }).delete();
}

/** A project with its files; its chats stay, out of any project. */
export async function deleteProject(db: Knex, storage: ObjectStorage, reader: Reader, projectId: string): Promise<void> {
  await projectFor(db, reader, projectId);
  await deleteFiles(db, storage, await filesOfProject(db, projectId));
  await db('playground_projects').where({ id: projectId }).delete();
}
