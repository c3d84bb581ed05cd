/**
 * `POST /v1/audio/speech` (JSON in, audio bytes out), `POST /v1/audio/transcriptions` and
 * `POST /v1/audio/translations` (a multipart upload as OpenAI's clients send it, or JSON with the audio
 * in base64 / a data URL). A transcription's or translation's file must be audio by its bytes (a text file
 * or an image is a 400 before anything is reserved).
 */
import Router from '@koa/router';
import { InvalidRequestError, PayloadTooLargeError } from '../../core/errors';
import { recogniseAudio, type RecognisedAudio } from '../../domain/uploads';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { checkRequestedModel, runModelRequest, sendModelResponse, serveJsonModelRequest } from '../requests/run';
import { isMultipart } from '../http/multipart';
import {
  transcriptionFieldsSchema, translationFieldsSchema, validateSpeechBody, validateTranscriptionFields, validateTranslationFields, type TranscriptionBody, type TranscriptionFields,
} from '../../endpoints/audio/body';
import { coerceFormFields } from '../../endpoints/form-values';
import { contentForIdempotency, receiveUploadForm, storeUploadBuffer, type ReceivedUpload } from '../uploads/receive';
import { withUploads } from '../uploads/with-uploads';

export function audioRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  router.post('/audio/speech', (ctx) => serveJsonModelRequest(ctx, deps, 'audio.speech', validateSpeechBody));

  router.post('/audio/transcriptions', (ctx) => serveAudioUpload(ctx, deps, 'audio.transcriptions', transcriptionFieldsSchema.properties, validateTranscriptionFields));
  // Speech in any language to English text: the same upload, OpenAI's fewer fields.
  router.post('/audio/translations', (ctx) => serveAudioUpload(ctx, deps, 'audio.translations', translationFieldsSchema.properties, validateTranslationFields));

  return router;
}

/**
 * The upload as audio, from its head, or from all of it when the head cannot tell (a large ID3 tag before
 * the first frame, an MP4 whose index comes last); a 400 when it is not audio.
 */
async function uploadedAudio(deps: AppDeps, upload: ReceivedUpload): Promise<RecognisedAudio> {
  const hints = { filename: upload.ref.filename, mediaType: upload.declaredType };
  const audio = recogniseAudio(upload.head, upload.ref.bytes, hints)
    ?? (upload.head.length < upload.ref.bytes ? recogniseAudio(await deps.storage.getBuffer(upload.ref.key), upload.ref.bytes, hints) : null);
  if (!audio) {
    throw new InvalidRequestError(
      `The file '${upload.ref.filename}' is not audio a transcription model can take: expected flac, mp3, mp4/m4a, ogg, wav, webm or aac.`,
      { param: 'file', code: 'invalid_audio_format' },
    );
  }
  return audio;
}

async function serveAudioUpload(
  ctx: GatewayContext, deps: AppDeps, endpoint: 'audio.transcriptions' | 'audio.translations',
  properties: Record<string, unknown>, validate: (fields: Record<string, unknown>) => TranscriptionFields,
): Promise<void> {
  const { fields, upload } = isMultipart(ctx.get('content-type')) ? await transcriptionForm(ctx, deps, properties) : await transcriptionJson(ctx, deps);
  await withUploads(deps, upload ? [upload.ref] : [], async () => {
    if (!upload) throw new InvalidRequestError("Missing required parameter: 'file'.", { param: 'file', code: 'missing_required_parameter' });
    const typed = validate(fields);
    const { mediaType, estimatedSeconds } = await uploadedAudio(deps, upload);
    const body: TranscriptionBody = { ...typed, file: { ...upload.ref, mediaType, estimatedSeconds } };
    await checkRequestedModel(ctx, deps, endpoint, body.model, body);
    const result = await runModelRequest(ctx, deps, { endpoint, model: body.model, body, idempotencyBody: contentForIdempotency(body) });
    await sendModelResponse(ctx, deps, result);
  });
}

interface TranscriptionInput {
  fields: Record<string, unknown>;
  upload: ReceivedUpload | null;
}

async function transcriptionForm(ctx: GatewayContext, deps: AppDeps, properties: Record<string, unknown>): Promise<TranscriptionInput> {
  const form = await receiveUploadForm(ctx, deps, { fileBytes: deps.config.maxUploadBytes, files: 1 });
  const unexpected = form.uploads.find((u) => u.field !== 'file');
  if (unexpected) {
    await withUploads(deps, form.uploads.map((u) => u.ref), async () => {
      throw new InvalidRequestError(`Unexpected file field '${unexpected.field}': send the audio as 'file'.`, { param: unexpected.field, code: 'unknown_parameter' });
    });
  }
  return { fields: coerceFormFields(form.fields, properties), upload: form.uploads[0] ?? null };
}

/** `{model, file: "<base64>" | "data:audio/...;base64,...", filename?, ...}`: the audio is stored like an upload. */
async function transcriptionJson(ctx: GatewayContext, deps: AppDeps): Promise<TranscriptionInput> {
  const json = await readJsonBody(ctx, deps.config.maxJsonBodyBytes);
  const { file, filename, ...fields } = json;
  if (file === undefined) return { fields, upload: null };
  if (typeof file !== 'string' || file.length === 0) {
    throw new InvalidRequestError("Invalid value for 'file': expected the audio as a base64 string or a data URL.", { param: 'file', code: 'invalid_type' });
  }
  if (filename !== undefined && (typeof filename !== 'string' || filename.length === 0 || filename.length > 255)) {
    throw new InvalidRequestError("Invalid value for 'filename': expected a name of 1 to 255 characters.", { param: 'filename', code: 'invalid_value' });
  }
  const decoded = decodeAudio(file);
  if (decoded.data.length > deps.config.maxUploadBytes) {
    throw new PayloadTooLargeError(`The file in 'file' is too large: the limit is ${deps.config.maxUploadBytes} bytes.`, { param: 'file', code: 'file_too_large' });
  }
  const upload = await storeUploadBuffer(deps.storage, ctx.state.requestId, {
    field: 'file', filename: (filename as string | undefined) ?? 'audio', mediaType: decoded.mediaType, data: decoded.data,
  });
  return { fields, upload };
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function decodeAudio(value: string): { data: Buffer; mediaType: string } {
  const dataUrl = /^data:([^;,]*)(;[^,]*)?,(.*)$/s.exec(value);
  const mediaType = dataUrl?.[1] || 'application/octet-stream';
  if (dataUrl && !/;base64/i.test(dataUrl[2] ?? '')) {
    throw new InvalidRequestError("Invalid value for 'file': a data URL must be base64-encoded (data:audio/...;base64,...).", { param: 'file', code: 'invalid_value' });
  }
  const text = (dataUrl ? dataUrl[3] : value).replace(/\s+/g, '');
  const data = BASE64.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0);
  if (data.length === 0) {
    throw new InvalidRequestError("Invalid value for 'file': it is not valid base64 audio.", { param: 'file', code: 'invalid_value' });
  }
  return { data, mediaType };
}

