/**
 * Playground files over HTTP: reading an upload's JSON body, serving a file to exactly those who may read
 * it (domain/playground-files.ts), deleting one, and the workspace's storage as the app shows it.
 *   GET    /files/:id      a Playground file (chat or project), to those who may read it
 *   DELETE /files/:id      (the chat's owner, or the project's owner): its space is given back
 *   GET    /storage        {used_bytes, limit_bytes, playground_bytes}: API and Playground files together
 */
import type Router from '@koa/router';
import { InvalidRequestError, PermissionDeniedError } from '../../core/errors';
import { storageUsage } from '../../domain/files';
import { chatFor, projectFor, type PlaygroundFile, type Reader } from '../../domain/playground';
import { deleteFiles, readableFile } from '../../domain/playground-files';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Base64 is 4/3 of the bytes, plus the JSON around it. */
export const MAX_UPLOAD_BODY = Math.ceil(MAX_FILE_BYTES * 1.4);

/** An upload's `{filename, content_type, data (base64)}`, checked. */
export function readUpload(b: Record<string, unknown>): { filename: string; contentType: string; data: Buffer } {
  const filename = typeof b.filename === 'string' && b.filename.trim() ? b.filename.trim().slice(0, 200) : 'file';
  const contentType = typeof b.content_type === 'string' && /^[\w.+-]+\/[\w.+-]+$/.test(b.content_type) ? b.content_type : 'application/octet-stream';
  if (typeof b.data !== 'string') throw new InvalidRequestError('data (base64) is required.', { param: 'data' });
  const data = Buffer.from(b.data, 'base64');
  if (data.length === 0 || data.length > MAX_FILE_BYTES) throw new InvalidRequestError(`A file holds 1 byte to ${MAX_FILE_BYTES / 1024 / 1024} MB.`, { param: 'data' });
  return { filename, contentType, data };
}

export function fileJson(f: PlaygroundFile) {
  return { id: f.id, object: 'playground.file', filename: f.filename, content_type: f.contentType, bytes: f.bytes, chat_id: f.chatId, project_id: f.projectId };
}

export function fileRoutes(router: Router<GatewayState>, deps: AppDeps, reader: (ctx: GatewayContext) => Reader): void {
  const readable = (ctx: GatewayContext) => readableFile(deps.db, reader(ctx), ctx.params.id, (chatId) => chatFor(deps.db, reader(ctx), chatId));

  router.get('/files/:id', async (ctx) => {
    const file = await readable(ctx);
    const object = await deps.storage.get(file.storageKey);
    ctx.type = file.contentType;
    ctx.length = file.bytes;
    ctx.set('content-disposition', `inline; filename="${file.filename.replace(/["\\\r\n]/g, '_')}"`);
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('content-security-policy', "default-src 'none'; img-src 'self'; media-src 'self'; sandbox");
    ctx.body = object.body;
  });

  router.delete('/files/:id', async (ctx) => {
    const file = await readable(ctx);
    const owner = file.projectId ? projectFor(deps.db, reader(ctx), file.projectId) : chatFor(deps.db, reader(ctx), file.chatId as string, 'owner');
    await owner.catch(() => { throw new PermissionDeniedError('Only the owner of the chat or project may delete its files.', { code: 'not_file_owner' }); });
    await deleteFiles(deps.db, deps.storage, [file]);
    ctx.body = { id: file.id, object: 'playground.file', deleted: true };
  });

  router.get('/storage', async (ctx) => {
    const usage = await storageUsage(deps.db, reader(ctx).workspaceId);
    ctx.body = { object: 'storage', used_bytes: usage.usedBytes, limit_bytes: usage.limitBytes, playground_bytes: usage.playgroundBytes };
  });
}
