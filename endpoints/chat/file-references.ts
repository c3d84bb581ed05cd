/**
 * Chat content blocks may name an uploaded file (`{type: "file", file: {file_id}}`). The API checks that
 * every named file is the workspace's own (404 otherwise, before any workflow starts); the chat handler then
 * replaces each reference with the file's bytes as a data URL (an image becomes an `image_url` part for
 * models that see images), because providers cannot read our storage.
 */
import type { Knex } from 'knex';
import type { ObjectStorage } from '../../infra/storage';
import { InvalidRequestError } from '../../core/errors';
import { fileNotFound, findFiles, type FileRecord } from '../../domain/files';

/** Files inlined into one chat request, in total (they travel base64-encoded to the provider). */
export const MAX_CHAT_FILE_BYTES = 32 * 1024 * 1024;

export interface FileReference {
  fileId: string;
  /** Where the reference is, as error `param`s name it: `messages[0].content[1].file.file_id`. */
  param: string;
}

interface MessageLike {
  content?: unknown;
}

export function fileReferences(messages: MessageLike[]): FileReference[] {
  const refs: FileReference[] = [];
  messages.forEach((message, i) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((part: any, j: number) => {
      const fileId = part?.type === 'file' ? part.file?.file_id : undefined;
      if (typeof fileId === 'string') refs.push({ fileId, param: `messages[${i}].content[${j}].file.file_id` });
    });
  });
  return refs;
}

/** The workspace's records of every referenced file; 404 (as for a missing file) for any other id. */
export async function ownReferencedFiles(db: Knex, workspaceId: string, messages: MessageLike[]): Promise<Map<string, FileRecord>> {
  return ownFiles(db, workspaceId, fileReferences(messages));
}

/** The workspace's records of the named files; 404 (as for a missing file) for any other id. */
export async function ownFiles(db: Knex, workspaceId: string, refs: FileReference[]): Promise<Map<string, FileRecord>> {
  const files = await findFiles(db, workspaceId, refs.map((r) => r.fileId));
  for (const ref of refs) if (!files.has(ref.fileId)) throw fileNotFound(ref.fileId, ref.param);
  const total = [...files.values()].reduce((sum, f) => sum + f.bytes, 0);
  if (total > MAX_CHAT_FILE_BYTES) {
    throw new InvalidRequestError(`The referenced files hold ${total} bytes; at most ${MAX_CHAT_FILE_BYTES} bytes of files fit in one chat request.`, {
      param: refs[0].param, code: 'files_too_large',
    });
  }
  return files;
}

/**
 * The messages with every file reference replaced by the file's bytes. Parts other than file references,
 * and messages without any, are returned as they were.
 */
export async function inlineReferencedFiles<M extends MessageLike>(
  messages: M[],
  opts: { db: Knex; storage: ObjectStorage; workspaceId: string; imagesAsImageUrl: boolean },
): Promise<M[]> {
  if (fileReferences(messages).length === 0) return messages;
  const files = await ownReferencedFiles(opts.db, opts.workspaceId, messages);
  const data = new Map<string, string>();
  for (const file of files.values()) {
    data.set(file.id, `data:${file.contentType};base64,${(await opts.storage.getBuffer(file.storageKey)).toString('base64')}`);
  }
  return messages.map((message) => {
    if (!Array.isArray(message.content)) return message;
    const content = message.content.map((part: any) => {
      const fileId = part?.type === 'file' ? part.file?.file_id : undefined;
      if (typeof fileId !== 'string') return part;
      const file = files.get(fileId)!;
      const url = data.get(fileId)!;
      if (opts.imagesAsImageUrl && file.contentType.startsWith('image/')) return { type: 'image_url', image_url: { url } };
      return { type: 'file', file: { filename: part.file.filename ?? file.filename, file_data: url } };
    });
    return { ...message, content };
  });
}
