/**
 * `/v1/files`: upload, list, retrieve, content, delete. Every response of these routes (errors too) carries
 * the workspace's `x-storage-used-bytes` and `x-storage-limit-bytes`, read after the handler ran.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import { InvalidRequestError } from '../../core/errors';
import { contentDisposition } from '../../core/filenames';
import { deleteFile, fileNotFound, getFile, isStoredFilePurpose, STORED_FILE_PURPOSES, listFiles, storageUsage, toFileObject, type ListFilesQuery } from '../../domain/files';
import type { AppDeps, GatewayState } from '../http/context';
import { createFile } from './create';
import { requirePermission } from '../http/permissions';
import { listObject } from '../../domain/pagination';

const MAX_LIST_LIMIT = 10_000;

export function filesRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  // Path-scoped: a bare use() would also wrap every other /v1 route mounted after this router.
  router.use('/files', storageHeaders(deps));

  router.post('/files', requirePermission('files.write'), (ctx) => createFile(ctx, deps));

  router.get('/files', requirePermission('files.read'), async (ctx) => {
    const query = parseListQuery(ctx.query);
    const page = await listFiles(deps.db, ctx.state.auth.workspaceId, query);
    if ('unknownCursor' in page) throw new InvalidRequestError(`Invalid 'after': no file '${query.after}' to page after.`, { param: 'after', code: 'invalid_value' });
    const data = page.files.map(toFileObject);
    ctx.body = listObject(data, page.hasMore);
  });

  router.get('/files/:fileId', requirePermission('files.read'), async (ctx) => {
    ctx.body = toFileObject(await getFile(deps.db, ctx.state.auth.workspaceId, ctx.params.fileId));
  });

  router.get('/files/:fileId/content', requirePermission('files.read'), async (ctx) => {
    const file = await getFile(deps.db, ctx.state.auth.workspaceId, ctx.params.fileId);
    let object;
    try {
      object = await deps.storage.get(file.storageKey);
    } catch (err) {
      // A delete that removed the bytes but whose commit failed leaves a row without bytes: it is gone all the same.
      if ((err as { name?: string }).name === 'NoSuchKey') throw fileNotFound(file.id);
      throw err;
    }
    ctx.type = /^text\/|^application\/(json|jsonl|xml|yaml)$/.test(file.contentType) ? `${file.contentType}; charset=utf-8` : file.contentType;
    ctx.length = file.bytes;
    ctx.set('content-disposition', contentDisposition('attachment', file.filename));
    ctx.set('x-content-type-options', 'nosniff');
    ctx.body = object.body;
  });

  router.delete('/files/:fileId', requirePermission('files.write'), async (ctx) => {
    const { auth } = ctx.state;
    await deleteFile(deps.db, deps.storage, { workspaceId: auth.workspaceId, fileId: ctx.params.fileId, actor: `api_key:${auth.keyId}` });
    ctx.body = { id: ctx.params.fileId, object: 'file', deleted: true };
  });

  return router;
}

/** Storage use after the handler (so an upload or delete shows in it), on success and on error alike. */
function storageHeaders(deps: AppDeps): Koa.Middleware<GatewayState> {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      try {
        const usage = await storageUsage(deps.db, ctx.state.auth.workspaceId);
        ctx.set('x-storage-used-bytes', String(usage.usedBytes));
        ctx.set('x-storage-limit-bytes', String(usage.limitBytes));
      } catch (err) {
        deps.log.warn({ err, requestId: ctx.state.requestId }, 'could not read storage usage for the response headers');
      }
    }
  };
}

function parseListQuery(query: Record<string, string | string[] | undefined>): ListFilesQuery {
  const single = (name: string): string | undefined => {
    const value = query[name];
    if (Array.isArray(value)) throw new InvalidRequestError(`'${name}' may be given once.`, { param: name, code: 'invalid_value' });
    return value;
  };
  const limitText = single('limit');
  const limit = limitText === undefined ? MAX_LIST_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new InvalidRequestError(`Invalid 'limit': expected an integer from 1 to ${MAX_LIST_LIMIT}.`, { param: 'limit', code: 'invalid_value' });
  }
  const order = single('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new InvalidRequestError("Invalid 'order': expected 'asc' or 'desc'.", { param: 'order', code: 'invalid_value' });
  const purpose = single('purpose');
  if (purpose !== undefined && !isStoredFilePurpose(purpose)) {
    throw new InvalidRequestError(`Invalid 'purpose': expected one of ${STORED_FILE_PURPOSES.join(', ')}.`, { param: 'purpose', code: 'invalid_value' });
  }
  const after = single('after');
  return { limit, order, ...(purpose ? { purpose } : {}), ...(after ? { after } : {}) };
}
