/**
 * `POST /v1/files`. The upload stays in the API (bytes cannot travel through workflow history) and is made
 * atomic instead: the bytes stream to object storage under the file's id, then ONE transaction locks the
 * workspace row, checks the storage limit and inserts the record (completing the Idempotency-Key claim);
 * a failed or refused commit deletes the stored object, so nothing is ever half-written.
 */
import { ConflictError, InvalidRequestError, PayloadTooLargeError } from '../../core/errors';
import { commitFile, FILE_PURPOSES, fileStorageKey, findFile, fileNotFound, isFilePurpose, storageLimitExceeded, storageUsage, toFileObject, type FileObject } from '../../domain/files';
import { newId } from '../../core/ids';
import type { AppDeps, GatewayContext } from '../http/context';
import { readIdempotencyKey } from '../../domain/idempotency';
import { claimUploadKey, uploadBodyHash, type CompletedUploadKey, type OwnedUploadKey } from '../../domain/upload-idempotency';
import { isMultipart, receiveUpload, type ReceivedUpload } from './upload';
import { dropRestOfBody } from '../http/body';

/** Room for the multipart framing around the file (boundaries, part headers, the purpose field, a long filename). */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** Enough leading bytes for every signature domain/media-types.ts knows. */
const SNIFF_BYTES = 64;

export async function createFile(ctx: GatewayContext, deps: AppDeps): Promise<void> {
  const { auth } = ctx.state;
  if (!isMultipart(ctx.get('content-type'))) {
    dropRestOfBody(ctx.req);
    throw new InvalidRequestError(`Expected a multipart/form-data body, got '${ctx.get('content-type') || 'none'}'.`, { code: 'invalid_content_type' });
  }
  const key = readIdempotencyKey(ctx.get('idempotency-key'));
  if (!key) {
    ctx.body = await storeUpload(ctx, deps, newId('file'), null);
    return;
  }
  const claim = await claimUploadKey(deps.db, { workspaceId: auth.workspaceId, key, clientGone: () => ctx.req.destroyed });
  if (claim.kind === 'completed') {
    ctx.body = await replayUpload(ctx, deps, claim);
    ctx.set('x-idempotent-replayed', 'true');
    return;
  }
  try {
    ctx.body = await storeUpload(ctx, deps, claim.fileId, claim);
  } catch (err) {
    await claim.release().catch((e) => deps.log.warn({ err: e }, 'could not release an upload idempotency claim'));
    throw err;
  } finally {
    claim.stopHeartbeat();
  }
}

function checkField(name: string, value: string): void {
  if (name === 'purpose' && !isFilePurpose(value)) {
    throw new InvalidRequestError(`Invalid value for 'purpose': '${value.slice(0, 40)}'. Expected one of ${FILE_PURPOSES.join(', ')}.`, { param: 'purpose', code: 'invalid_value' });
  }
  // Expiry (`expires_after[...]`) is not offered: refusing it says so instead of silently keeping the file.
  if (name !== 'purpose') {
    throw new InvalidRequestError(`Unrecognized form field: '${name.slice(0, 40)}'.`, { param: name, code: 'unknown_parameter' });
  }
}

function checkComplete(received: ReceivedUpload): string {
  const purpose = received.fields.purpose;
  if (purpose === undefined) throw new InvalidRequestError("Missing required parameter: 'purpose'.", { param: 'purpose', code: 'missing_required_parameter' });
  if (received.bytes === 0) throw new InvalidRequestError('The file is empty.', { param: 'file', code: 'empty_file' });
  return purpose;
}

async function storeUpload(ctx: GatewayContext, deps: AppDeps, fileId: string, claim: OwnedUploadKey | null): Promise<FileObject> {
  const { auth } = ctx.state;
  const usage = await storageUsage(deps.db, auth.workspaceId);
  const remaining = Math.max(0, usage.limitBytes - usage.usedBytes);
  const maxFile = deps.config.maxUploadBytes;
  const maxBytes = Math.min(maxFile, remaining);
  const tooLarge = () => (maxFile <= remaining
    ? new PayloadTooLargeError(`The file is larger than the maximum upload size of ${maxFile} bytes.`, { param: 'file', code: 'file_too_large' })
    : storageLimitExceeded(usage, null));

  // A declared body clearly over the limit is refused before a byte is stored.
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > maxBytes + MULTIPART_OVERHEAD_BYTES) {
    dropRestOfBody(ctx.req);
    throw tooLarge();
  }

  const storageKey = fileStorageKey(auth.workspaceId, fileId);
  try {
    const received = await receiveUpload(ctx.req, {
      maxBytes, tooLarge, checkField,
      sink: async (chunks, contentType) => {
        // The type is sniffed from the first bytes, so they are read before the object is created.
        const rest = await peek(chunks, SNIFF_BYTES);
        await deps.storage.putStream(storageKey, rest, { contentType: contentType() });
      },
    });
    const purpose = checkComplete(received);
    const file = await commitFile(deps.db, {
      id: fileId, workspaceId: auth.workspaceId, filename: received.filename, purpose: purpose as FileObject['purpose'], bytes: received.bytes,
      contentType: received.contentType, storageKey, sha256: received.sha256, createdByKeyId: auth.keyId, actor: `api_key:${auth.keyId}`,
    }, claim ? (trx) => claim.complete(trx, uploadBodyHash({ purpose, filename: received.filename, sha256: received.sha256 })) : undefined);
    return toFileObject(file);
  } catch (err) {
    // Whatever failed after (or while) the bytes went up, they must not stay.
    await deps.storage.delete(storageKey).catch((e) => deps.log.error({ err: e, storageKey }, 'could not delete the object of a failed upload'));
    throw err;
  }
}

/** Reads the first `bytes` and returns them followed by the rest, as one stream. */
async function peek(chunks: AsyncIterable<Buffer>, bytes: number): Promise<AsyncIterable<Buffer>> {
  const it = chunks[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < bytes) {
    const step = await it.next();
    if (step.done) {
      done = true;
      break;
    }
    head.push(step.value);
    size += step.value.length;
  }
  async function* rest(): AsyncGenerator<Buffer> {
    yield* head;
    if (done) return;
    for (let step = await it.next(); !step.done; step = await it.next()) yield step.value;
  }
  return rest();
}

/** Same key again: read the body only to hash it; the same body gets the first file back, another a 422. */
async function replayUpload(ctx: GatewayContext, deps: AppDeps, claim: CompletedUploadKey): Promise<FileObject> {
  const received = await receiveUpload(ctx.req, {
    maxBytes: deps.config.maxUploadBytes,
    tooLarge: () => new PayloadTooLargeError(`The file is larger than the maximum upload size of ${deps.config.maxUploadBytes} bytes.`, { param: 'file', code: 'file_too_large' }),
    checkField,
    sink: async (chunks) => { for await (const _ of chunks); },
  });
  const purpose = checkComplete(received);
  if (uploadBodyHash({ purpose, filename: received.filename, sha256: received.sha256 }) !== claim.bodyHash) {
    throw new ConflictError('This Idempotency-Key was already used with a different upload. Use a new key for a new file.', {
      status: 422, code: 'idempotency_key_reused', param: 'Idempotency-Key',
    });
  }
  const file = await findFile(deps.db, ctx.state.auth.workspaceId, claim.fileId);
  // The file this key created was deleted since: it is gone for a replay too.
  if (!file) throw fileNotFound(claim.fileId);
  return toFileObject(file);
}
