/**
 * Playground generations on the API's own request workflows, started for the signed-in member: the same
 * input an API call builds (requestInput), the same credits, fallback chains and usage records, with no API
 * key (apiKeyId null: the member's spending is the workspace's, and key quotas do not apply to people).
 * The run is not tied to the browser's connection: a chat reply streams into a ReplyBuffer held in this
 * process, and whoever watches attaches to it; an image generation runs the synchronous workflow. When the
 * run settles, its outcome is written to the message. A message found running after its process went away
 * is settled from its workflow's status.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Knex } from 'knex';
import type { chatStreamWorkflow, ChatStreamInput } from '../../workflows/chat-stream';
import type { modelRequestWorkflow } from '../../workflows/model-request';
import { requestWorkflowId } from '../../workflows/contracts';
import type { Endpoint, EndpointResponse } from '../../endpoints/types';
import { findGatewayError } from '../../activities/failures';
import { loadPayload } from '../../activities/request-io';
import { resultKey } from '../../endpoints/media';
import { addFile, finishMessage, saveReplySoFar, type Message, type PlaygroundFile } from '../../domain/playground';
import type { AppDeps, GatewayContext } from '../http/context';
import { requestInput, startRequestWorkflow } from '../requests/start';
import { ReplyBuffer } from './reply-buffer';

type ChatRef = { id: string; workspaceId: string };

export class PlaygroundRuns {
  private readonly replies = new Map<string, ReplyBuffer>();

  constructor(private readonly deps: AppDeps) {}

  /** The live reply of a message, if it is streaming in this process. */
  live(messageId: string): ReplyBuffer | undefined {
    return this.replies.get(messageId);
  }

  /** Stops a streaming reply: what was generated is kept and settled. */
  stop(messageId: string): boolean {
    const reply = this.replies.get(messageId);
    reply?.destroy();
    return Boolean(reply);
  }

  async startReply(ctx: GatewayContext, message: Message, body: { model: string } & Record<string, unknown>): Promise<void> {
    const { requestId } = ctx.state;
    const input: ChatStreamInput = {
      ...(await this.input(ctx, 'chat.completions', body)),
      streamTaskQueue: this.deps.streaming.taskQueue,
      localWorker: this.deps.streaming.localWorker && this.deps.config.eagerStart,
    };
    const reply = new ReplyBuffer((text) => saveReplySoFar(this.deps.db, message.id, text));
    this.replies.set(message.id, reply);
    this.deps.streaming.registry.open(requestId, reply.asResponse(), () => undefined);
    let handle: WorkflowHandle<typeof chatStreamWorkflow>;
    try {
      handle = await startRequestWorkflow<typeof chatStreamWorkflow>(ctx, this.deps, 'chatStreamWorkflow', {
        workflowId: requestWorkflowId(requestId), args: [input], model: body.model, endpoint: 'chat.completions', workflowExecutionTimeout: '45 minutes',
      });
    } catch (err) {
      this.forget(requestId, message.id);
      throw err;
    }
    void handle.result().then(
      (result) => finishMessage(this.deps.db, message.id, { status: result.ending === 'completed' ? 'completed' : 'stopped', content: reply.text, error: reply.error, errorCode: reply.errorCode }),
      (err) => finishMessage(this.deps.db, message.id, { status: 'failed', content: reply.text, ...failure(err) }),
    ).catch((err) => this.deps.log.error({ err, requestId }, 'could not store a Playground reply'))
      .finally(() => this.forget(requestId, message.id));
  }

  /** An image generation: the synchronous request workflow, its images stored as Playground files of the chat. */
  async startImages(ctx: GatewayContext, message: Message, chat: ChatRef, body: { model: string } & Record<string, unknown>): Promise<void> {
    await this.startGeneration(ctx, message, 'images.generations', body, async (response) => {
      // Large answers are kept as a stored object rather than inline JSON.
      const answer = response.kind === 'json' ? response.body : JSON.parse((await this.deps.storage.getBuffer(response.storageKey)).toString('utf8'));
      const files: PlaygroundFile[] = [];
      for (const [i, image] of ((answer as { data?: Array<{ b64_json?: string }> }).data ?? []).entries()) {
        if (image.b64_json) files.push(await this.storeFile(chat, message, `image-${i + 1}.png`, 'image/png', Buffer.from(image.b64_json, 'base64')));
      }
      return { files, content: `${files.length} image${files.length === 1 ? '' : 's'}` };
    });
  }

  /** Speech: the audio the request stored, copied into a Playground file of the chat. */
  async startSpeech(ctx: GatewayContext, message: Message, chat: ChatRef, body: { model: string; input: string } & Record<string, unknown>): Promise<void> {
    await this.startGeneration(ctx, message, 'audio.speech', body, async (response) => {
      if (response.kind !== 'binary') throw new Error('The speech model answered without audio.');
      const audio = await this.deps.storage.getBuffer(response.storageKey);
      const extension = response.contentType.split('/')[1]?.replace(/^mpeg$/, 'mp3') ?? 'audio';
      return { files: [await this.storeFile(chat, message, `speech.${extension}`, response.contentType, audio)], content: body.input };
    });
  }

  /** Music: each track the request stored, copied into a Playground file of the chat. */
  async startMusic(ctx: GatewayContext, message: Message, chat: ChatRef, body: { model: string } & Record<string, unknown>): Promise<void> {
    const { requestId } = ctx.state;
    await this.startGeneration(ctx, message, 'music.generations', body, async (response) => {
      const tracks = response.kind === 'json' ? (response.body as { data?: Array<{ content_type: string }> }).data ?? [] : [];
      const files: PlaygroundFile[] = [];
      for (const [i, track] of tracks.entries()) {
        const audio = await this.deps.storage.getBuffer(resultKey(requestId, `track-${i}`, track.content_type));
        files.push(await this.storeFile(chat, message, `track-${i + 1}.${track.content_type === 'audio/wav' ? 'wav' : 'mp3'}`, track.content_type, audio));
      }
      return { files, content: `${files.length} track${files.length === 1 ? '' : 's'}` };
    });
  }

  /** A transcription of a Playground file: the transcript becomes the message's text. */
  async startTranscription(ctx: GatewayContext, message: Message, body: { model: string } & Record<string, unknown>): Promise<void> {
    await this.startGeneration(ctx, message, 'audio.transcriptions', body, async (response) => {
      const text = response.kind === 'json' ? String((response.body as { text?: unknown }).text ?? '') : (await this.deps.storage.getBuffer(response.storageKey)).toString('utf8');
      return { files: [], content: text };
    });
  }

  /**
   * Runs the synchronous request workflow for a generation; when it settles, `store` turns its response into
   * Playground files and the message is finished (or failed, with nothing stored).
   */
  private async startGeneration(
    ctx: GatewayContext, message: Message, endpoint: Endpoint, body: { model: string } & Record<string, unknown>,
    store: (response: EndpointResponse) => Promise<{ files: PlaygroundFile[]; content: string }>,
  ): Promise<void> {
    const { requestId } = ctx.state;
    const handle = await startRequestWorkflow<typeof modelRequestWorkflow>(ctx, this.deps, 'modelRequestWorkflow', {
      workflowId: requestWorkflowId(requestId), args: [await this.input(ctx, endpoint, body)], model: body.model, endpoint,
    });
    void handle.result().then(async (result) => {
      const { files, content } = await store(await loadPayload(this.deps.storage, result.response));
      await finishMessage(this.deps.db, message.id, { status: 'completed', files: files.map((f) => f.id), content });
    }, (err) => finishMessage(this.deps.db, message.id, { status: 'failed', ...failure(err) }))
      .catch((err) => this.deps.log.error({ err, requestId, endpoint }, 'could not store a Playground generation'));
  }

  private async storeFile(chat: ChatRef, message: Message, filename: string, contentType: string, bytes: Buffer): Promise<PlaygroundFile> {
    const file = await addFile(this.deps.db, { chatId: chat.id, workspaceId: chat.workspaceId, userId: message.userId, filename, contentType, bytes: bytes.length });
    await this.deps.storage.put(file.storageKey, bytes, { contentType, contentLength: bytes.length });
    return file;
  }

  /**
   * Messages still `running` that no run of this process holds: their process stopped or restarted. The
   * workflow is asked; a closed one settles the message (its money was settled by the workflow itself).
   */
  async settleOrphans(db: Knex, messages: Message[]): Promise<boolean> {
    let changed = false;
    for (const m of messages) {
      if (m.status !== 'running' || !m.requestId || m.kind === 'video' || this.replies.has(m.id) || Date.now() / 1000 - m.createdAt < 10) continue;
      const description = await this.deps.temporal.client.workflow.getHandle(requestWorkflowId(m.requestId)).describe().catch(() => null);
      if (description && description.status.name === 'RUNNING') continue;
      // The text saved while it streamed stays (finishMessage leaves the content as it is).
      await finishMessage(db, m.id, { status: 'failed', error: 'The server process holding this reply stopped: the text written until then is kept, and its charge is on the receipt.' });
      changed = true;
    }
    return changed;
  }

  private async input(ctx: GatewayContext, endpoint: Endpoint, body: { model: string }) {
    return { ...(await requestInput(ctx, this.deps, { endpoint, model: body.model, body })), apiKeyId: null, userId: ctx.state.auth.userId };
  }

  private forget(requestId: string, messageId: string): void {
    this.deps.streaming.registry.close(requestId);
    this.replies.get(messageId)?.settle();
    this.replies.delete(messageId);
  }
}

/** What a failed run tells its message: the gateway error it carries (its message and code), else the innermost cause's message. */
function failure(err: unknown): { error: string; errorCode: string | null } {
  const known = findGatewayError(err);
  if (known) return { error: known.message, errorCode: known.code };
  let e: any = err;
  while (e?.cause) e = e.cause;
  return { error: e?.message ? String(e.message) : String(err), errorCode: null };
}
