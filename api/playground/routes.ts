/**
 * The Playground's endpoints under /api/playground, for a signed-in member (session cookie, same-origin
 * state changes). Reading follows the chat's sharing (a chat one may not read is a 404); sending needs
 * `continue` access and the role's `playground.use` (a Viewer reads, never spends).
 *   GET    /chats?search=&project_id=&archived=  chats the member can read (bookmarked first); archived ones only with archived=true
 *   POST   /chats                           {title?, model, system_prompt?, params?, project_id?}
 *   GET    /chats/:id?branch=               the chat, the messages of the branch on show (or of the one through
 *                                           message `branch`) with receipts and siblings, its running total
 *   PATCH  /chats/:id                       {title?, model?, system_prompt?, params?, project_id?, archived?, branch?}: `branch`
 *                                           (a message id) shows the branch through it, for everyone and after a reload
 *   DELETE /chats/:id                       (owner)
 *   POST   /chats/:id/messages              {content, files?, model?, params?, from?, regenerate?}: continues the branch on
 *                                           show; `from` (a prompt's id) edits it into a new branch beside it;
 *                                           `regenerate` (a reply's id) answers its prompt again, a new branch beside it
 *   POST   /chats/:id/images                {prompt, model, size?, n?, quality?}
 *   POST   /chats/:id/speech                {model, voice, input, response_format?}: an audio message with its player file
 *   POST   /chats/:id/videos                {model, prompt, duration?, resolution?, ...}: a durable video job on a 'video' message
 *   POST   /chats/:id/transcriptions        {model, file_id, language?, prompt?}: the transcript of an audio file of the chat
 *   POST   /chats/:id/music                 {model, prompt, duration?, response_format?}: tracks as audio files
 *          (a generation's message keeps `generation: {endpoint, body}`: sending it again with `regenerate`
 *          (that message's id) makes another beside it, a branch of the same prompt, both with their receipts)
 *   GET    /messages/:id/video              the finished video of a 'video' message, to those who can read the chat
 *   POST   /chats/:id/files                 {filename, content_type, data (base64)}: counted in the workspace's storage
 *   PUT    /chats/:id/sharing               {visibility, workspace_access?, members?: [{user_id, access}]} (owner)
 *   PUT|DELETE /chats/:id/bookmark, /chats/:id/messages/:mid/bookmark
 *   GET    /messages/:id/stream             server-sent events: the reply so far, then live, then `done`
 *   POST   /messages/:id/stop
 *   GET    /messages/:id/timeline           the run from its workflow's history
 *   GET    /bookmarks
 * Files and storage: ./files.ts; projects (with their files): ./projects.ts.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { ipLimitMiddleware } from '../http/ip-limit';
import { sessionAuth } from '../http/auth';
import { assertPermission } from '../http/permissions';
import { InvalidRequestError, NotFoundError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import {
  addMessage, bookmarksOf, branchOf, branchTo, chatFor, createChat, fileRecord, listChats, messagesOf, projectFor, selectBranch, setBookmark, setSharing,
  sharesOf, titleFrom, updateChat, type Chat, type Message, type Reader,
} from '../../domain/playground';
import { assertStorageLeft, deleteChat, filesForChat, storeUpload } from '../../domain/playground-files';
import { chatTotalMicro, receiptsFor } from '../../domain/playground-receipts';
import { validateImageGenerationBody } from '../../endpoints/images/body';
import { validateSpeechBody, validateTranscriptionFields, type TranscriptionBody } from '../../endpoints/audio/body';
import { validateMusicGenerationBody } from '../../endpoints/music/body';
import { recogniseAudio } from '../../domain/uploads';
import { sha256 } from '../../domain/idempotency';
import { validateVideoGenerationBody } from '../../endpoints/videos/body';
import { findVideoJob, type VideoJob } from '../../domain/video-jobs';
import { finishVideoMessage } from '../../domain/playground-videos';
import { createVideoJobFrom } from '../videos/create';
import { checkRequestedModel } from '../requests/run';
import type { Endpoint } from '../../endpoints/types';
import { PlaygroundRuns } from './runs';
import { chatBody } from './chat-body';
import { runTimeline } from './timeline';
import { fileJson, fileRoutes, MAX_UPLOAD_BODY, readUpload } from './files';
import { projectRoutes } from './projects';

export function playgroundRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/api/playground' });
  const runs = new PlaygroundRuns(deps);
  const body = (ctx: Koa.Context, limit = 256 * 1024) => readJsonBody(ctx, limit);
  const reader = (ctx: GatewayContext): Reader => ({ workspaceId: ctx.state.auth.workspaceId, userId: ctx.state.auth.userId as string });
  const spender = (ctx: GatewayContext, chatId: string) => {
    assertPermission(ctx, 'playground.use');
    return chatFor(deps.db, reader(ctx), chatId, 'continue');
  };

  router.use(ipLimitMiddleware(deps.counters, { limit: deps.config.ipRateLimit }));
  router.use(async (ctx, next) => {
    ctx.state.auth = await sessionAuth(ctx, deps.db);
    ctx.set('cache-control', 'no-store');
    await next();
  });

  router.get('/chats', async (ctx) => {
    const chats = await listChats(deps.db, reader(ctx), { search: str(ctx.query.search), projectId: str(ctx.query.project_id), archived: ctx.query.archived === 'true' });
    ctx.body = { object: 'list', data: chats.map((c) => chatJson(c, { access: c.access, bookmarked: c.bookmarked })) };
  });

  router.post('/chats', async (ctx) => {
    assertPermission(ctx, 'playground.use');
    const b = await body(ctx);
    if (typeof b.model !== 'string') throw new InvalidRequestError('Choose a model.', { param: 'model' });
    const chat = await createChat(deps.db, reader(ctx), { title: b.title, model: b.model, systemPrompt: b.system_prompt, params: b.params, projectId: b.project_id });
    ctx.status = 201;
    ctx.body = chatJson(chat, { access: 'owner' });
  });

  router.get('/chats/:id', async (ctx) => {
    const chat = await chatFor(deps.db, reader(ctx), ctx.params.id);
    const through = str(ctx.query.branch);
    let messages = await branchOf(deps.db, chat, through);
    if (await runs.settleOrphans(deps.db, messages)) messages = await branchOf(deps.db, chat, through);
    const receipts = await receiptsFor(deps.db, chat.workspaceId, messages.flatMap((m) => (m.requestId && m.role === 'assistant' ? [m.requestId] : [])));
    const jobs = await videoJobsOf(chat, messages);
    const bookmarked = new Set((await deps.db('playground_bookmarks').where({ user_id: reader(ctx).userId, chat_id: chat.id }).pluck('message_id')) as string[]);
    const total = await chatTotalMicro(deps.db, chat.workspaceId, chat.id);
    const files = await filesForChat(deps.db, chat);
    const attachments = (m: Message) => m.files.map((id) => ({ id, filename: files.get(id)?.filename ?? null, content_type: files.get(id)?.contentType ?? null }));
    // Who wrote each prompt, by name: in a shared chat, everyone's messages are not "You".
    const authorIds = [...new Set(messages.flatMap((m) => (m.userId ? [m.userId] : [])))];
    const authors = authorIds.length ? await deps.db('users').whereIn('id', authorIds).select('id', 'name') : [];
    ctx.body = {
      ...chatJson(chat, { access: chat.access, bookmarked: bookmarked.has('') }),
      authors: Object.fromEntries(authors.map((u: { id: string; name: string }) => [u.id, u.name])),
      total_credits: microToCredits(total),
      shares: chat.access === 'owner' ? await sharesOf(deps.db, chat.id) : undefined,
      messages: messages.map((m) => ({
        ...messageJson(m), attachments: attachments(m), bookmarked: bookmarked.has(m.id), receipt: m.requestId ? receipts.get(m.requestId) ?? null : null,
        job: jobs.has(m.id) ? jobJson(jobs.get(m.id) as VideoJob) : undefined, siblings: m.siblings,
      })),
    };
  });

  router.patch('/chats/:id', async (ctx) => {
    const chat = await chatFor(deps.db, reader(ctx), ctx.params.id, 'continue');
    const b = await body(ctx);
    // Moving a chat into or out of a project, and archiving it, are the owner's (into one of the owner's projects).
    if (b.project_id !== undefined || b.archived !== undefined) await chatFor(deps.db, reader(ctx), chat.id, 'owner');
    if (b.project_id !== undefined && b.project_id !== null) await projectFor(deps.db, reader(ctx), String(b.project_id));
    if (b.branch !== undefined) {
      if (typeof b.branch !== 'string') throw new InvalidRequestError('branch must be the id of a message of this chat.', { param: 'branch' });
      await selectBranch(deps.db, chat, b.branch);
    }
    ctx.body = chatJson(await updateChat(deps.db, chat, b), { access: chat.access });
  });

  router.delete('/chats/:id', async (ctx) => {
    const chat = await chatFor(deps.db, reader(ctx), ctx.params.id, 'owner');
    await deleteChat(deps.db, deps.storage, chat, `user:${reader(ctx).userId}`);
    ctx.body = { id: chat.id, deleted: true };
  });

  router.post('/chats/:id/messages', async (ctx) => {
    const chat = await spender(ctx, ctx.params.id);
    const b = await body(ctx);
    const content = typeof b.content === 'string' ? b.content : '';
    const fileIds = Array.isArray(b.files) ? b.files.map(String) : [];
    if (!content.trim() && fileIds.length === 0 && b.regenerate === undefined) throw new InvalidRequestError('Write a message or attach a file.', { param: 'content' });
    const model = typeof b.model === 'string' ? b.model : chat.model;
    const params = isObject(b.params) ? b.params : chat.params;
    const files = await filesForChat(deps.db, chat);
    for (const id of fileIds) {
      if (!files.has(id)) throw new NotFoundError(`No file with id '${id}' in this chat.`, { code: 'file_not_found', param: 'files' });
    }
    const all = await messagesOf(deps.db, chat.id);
    // Where the new turn goes: after the branch on show, beside an edited prompt, or beside a reply asked again.
    const regenerated = typeof b.regenerate === 'string' ? all.find((m) => m.id === b.regenerate) : undefined;
    const edited = typeof b.from === 'string' ? all.find((m) => m.id === b.from) : undefined;
    if (b.regenerate !== undefined && (!regenerated || regenerated.role !== 'assistant' || regenerated.kind !== 'text' || !regenerated.parentId)) {
      throw new NotFoundError(`No chat reply with id '${String(b.regenerate)}' in this chat.`, { code: 'message_not_found', param: 'regenerate' });
    }
    if (b.from !== undefined && (!edited || edited.role !== 'user')) throw new NotFoundError(`No prompt with id '${String(b.from)}' in this chat.`, { code: 'message_not_found', param: 'from' });
    const parentId = regenerated ? regenerated.parentId : edited ? edited.parentId : chat.currentMessageId ?? all.at(-1)?.id ?? null;
    const history = parentId ? branchTo(all, parentId) : [];
    const prompt = regenerated ? history.at(-1) as Message : undefined;
    const pending: Message = { id: '', chatId: chat.id, role: 'user', kind: 'text', content, files: fileIds, model: null, requestId: null, status: 'sent', error: null, errorCode: null, userId: reader(ctx).userId, parentId, createdAt: 0 };
    const request = await chatBody(deps.storage, {
      chat, instructions: chat.projectId ? (await projectFor(deps.db, { ...reader(ctx), userId: chat.userId }, chat.projectId)).instructions : '',
      history: prompt ? history : [...history, pending], files, model, params,
    });
    await checkRequestedModel(ctx, deps, 'chat.completions', model, request);
    const user = prompt ?? await addMessage(deps.db, { ...pending });
    const assistant = await addMessage(deps.db, { chatId: chat.id, role: 'assistant', content: '', model, requestId: ctx.state.requestId, status: 'running', userId: reader(ctx).userId, parentId: user.id });
    const patch: Record<string, unknown> = { model, params };
    if (chat.title === 'New chat' && !prompt) patch.title = titleFrom(content) ?? undefined;
    await updateChat(deps.db, chat, patch);
    await runs.startReply(ctx, assistant, request as typeof request & Record<string, unknown>);
    ctx.status = 202;
    ctx.body = { user: messageJson(user), assistant: messageJson(assistant) };
  });

  /** A generation on the synchronous request workflow: validated as its API endpoint validates, then run for the member. */
  const generation = <B extends { model: string }>(path: string, endpoint: Endpoint, kind: Message['kind'], validate: (b: Record<string, unknown>) => B, prompt: (request: B) => string,
    start: (ctx: GatewayContext, message: Message, chat: Chat, request: B & Record<string, unknown>) => Promise<void>) => {
    router.post(path, async (ctx) => {
      const chat = await spender(ctx, ctx.params.id);
      const { regenerate, ...sent } = await body(ctx);
      const again = await regeneratedGeneration(chat, regenerate);
      const request = validate(sent);
      await checkRequestedModel(ctx, deps, endpoint, request.model, request);
      if (kind !== 'text') await assertStorageLeft(deps.db, chat.workspaceId);
      const assistant = await startGenerationMessages(ctx, chat, prompt(request), { kind, model: request.model, requestId: ctx.state.requestId, generation: { endpoint: path.split('/').pop() as string, body: sent }, again });
      await start(ctx, assistant, chat, request as B & Record<string, unknown>);
      ctx.status = 202;
      ctx.body = { assistant: messageJson(assistant) };
    });
  };
  generation('/chats/:id/images', 'images.generations', 'image', (b) => validateImageGenerationBody({ ...b, response_format: 'b64_json' }), (r) => r.prompt, (...a) => runs.startImages(...a));
  generation('/chats/:id/speech', 'audio.speech', 'audio', validateSpeechBody, (r) => r.input, (...a) => runs.startSpeech(...a));
  generation('/chats/:id/music', 'music.generations', 'audio', validateMusicGenerationBody, (r) => r.prompt, (...a) => runs.startMusic(...a));

  router.post('/chats/:id/videos', async (ctx) => {
    const chat = await spender(ctx, ctx.params.id);
    const { regenerate, ...sent } = await body(ctx);
    const again = await regeneratedGeneration(chat, regenerate);
    const request = validateVideoGenerationBody(sent);
    await assertStorageLeft(deps.db, chat.workspaceId);
    // The same checks, price and durable job as POST /v1/videos/generations; the job id is the message's run.
    const job = await createVideoJobFrom(ctx, deps, request, { aliases: {} });
    const assistant = await startGenerationMessages(ctx, chat, request.prompt, { kind: 'video', model: request.model, requestId: job.id, generation: { endpoint: 'videos', body: sent }, again });
    ctx.status = 202;
    ctx.body = { assistant: messageJson(assistant), job: jobJson(job) };
  });

  router.post('/chats/:id/transcriptions', async (ctx) => {
    const chat = await spender(ctx, ctx.params.id);
    const { regenerate, ...sent } = await body(ctx);
    const again = await regeneratedGeneration(chat, regenerate);
    const { file_id: fileId, ...fields } = sent;
    const file = typeof fileId === 'string' ? await fileRecord(deps.db, chat.workspaceId, fileId) : null;
    if (!file || file.chatId !== chat.id) throw new NotFoundError(`No file with id '${String(fileId)}' in this chat.`, { code: 'file_not_found', param: 'file_id' });
    const typed = validateTranscriptionFields({ ...fields, response_format: 'json' });
    const bytes = await deps.storage.getBuffer(file.storageKey);
    const audio = recogniseAudio(bytes, bytes.length, { filename: file.filename, mediaType: file.contentType });
    if (!audio) throw new InvalidRequestError(`The file '${file.filename}' is not audio a transcription model can take.`, { param: 'file_id', code: 'invalid_audio_format' });
    // The Playground file itself is the upload: it stays with the chat after the run.
    const request: TranscriptionBody = {
      ...typed, file: { key: file.storageKey, filename: file.filename, mediaType: audio.mediaType, bytes: file.bytes, sha256: sha256(bytes), estimatedSeconds: audio.estimatedSeconds },
    };
    await checkRequestedModel(ctx, deps, 'audio.transcriptions', request.model, request);
    const assistant = await startGenerationMessages(ctx, chat, file.filename, { kind: 'text', model: request.model, requestId: ctx.state.requestId, files: [file.id], generation: { endpoint: 'transcriptions', body: sent }, again });
    await runs.startTranscription(ctx, assistant, request as unknown as { model: string } & Record<string, unknown>);
    ctx.status = 202;
    ctx.body = { assistant: messageJson(assistant) };
  });

  router.get('/messages/:id/video', async (ctx) => {
    const { message, chat } = await messageOf(ctx);
    // The chat's own copy once the message is finished; the job's until then.
    const job = message.kind === 'video' && message.requestId ? await findVideoJob(deps.db, chat.workspaceId, message.requestId) : null;
    const video = message.kind === 'video' && message.files[0] ? await fileRecord(deps.db, chat.workspaceId, message.files[0]) : job?.status === 'succeeded' ? job.videos[0] : undefined;
    if (!video) throw new NotFoundError('This message has no finished video.', { code: 'video_not_ready' });
    const object = await deps.storage.get(video.storageKey);
    ctx.type = video.contentType;
    ctx.length = video.bytes;
    ctx.body = object.body;
  });

  router.post('/chats/:id/files', async (ctx) => {
    const chat = await spender(ctx, ctx.params.id);
    const file = await storeUpload(deps.db, deps.storage, { ...reader(ctx), chatId: chat.id }, readUpload(await body(ctx, MAX_UPLOAD_BODY)));
    ctx.status = 201;
    ctx.body = fileJson(file);
  });

  fileRoutes(router, deps, reader);
  projectRoutes(router, deps, reader);

  router.put('/chats/:id/sharing', async (ctx) => {
    const chat = await chatFor(deps.db, reader(ctx), ctx.params.id, 'owner');
    const b = await body(ctx);
    await setSharing(deps.db, chat, { visibility: b.visibility, workspaceAccess: b.workspace_access, members: b.members });
    const updated = await chatFor(deps.db, reader(ctx), chat.id);
    ctx.body = { ...chatJson(updated, { access: 'owner' }), shares: await sharesOf(deps.db, chat.id) };
  });

  for (const [method, on] of [['put', true], ['delete', false]] as const) {
    router[method]('/chats/:id/bookmark', async (ctx) => {
      const chat = await chatFor(deps.db, reader(ctx), ctx.params.id);
      await setBookmark(deps.db, reader(ctx).userId, chat.id, '', on);
      ctx.body = { chat_id: chat.id, bookmarked: on };
    });
    router[method]('/chats/:id/messages/:mid/bookmark', async (ctx) => {
      const chat = await chatFor(deps.db, reader(ctx), ctx.params.id);
      const message = await deps.db('playground_messages').where({ id: ctx.params.mid, chat_id: chat.id }).first('id');
      if (!message) throw new NotFoundError(`No message with id '${ctx.params.mid}' in this chat.`, { code: 'message_not_found' });
      await setBookmark(deps.db, reader(ctx).userId, chat.id, message.id, on);
      ctx.body = { chat_id: chat.id, message_id: message.id, bookmarked: on };
    });
  }

  router.get('/bookmarks', async (ctx) => {
    const marks = await bookmarksOf(deps.db, reader(ctx));
    ctx.body = { object: 'list', data: marks.map((m) => ({ chat_id: m.chatId, message_id: m.messageId || null, chat_title: m.chatTitle, excerpt: m.excerpt })) };
  });

  /**
   * A message of a chat the member may read. Every other (none with this id, another workspace's, a chat
   * not shared with them) is the same 404, naming only the id asked for: the timeline, stream, video and
   * stop routes tell nothing of other chats.
   */
  const messageOf = async (ctx: GatewayContext): Promise<{ message: Message; chat: Chat }> => {
    const notFound = new NotFoundError(`No message with id '${ctx.params.id}'.`, { code: 'message_not_found' });
    const row = await deps.db('playground_messages as m').join('playground_chats as c', 'c.id', 'm.chat_id')
      .where({ 'm.id': ctx.params.id, 'c.workspace_id': reader(ctx).workspaceId }).first('m.chat_id');
    if (!row) throw notFound;
    const chat = await chatFor(deps.db, reader(ctx), row.chat_id).catch((err: unknown) => {
      throw err instanceof NotFoundError ? notFound : err;
    });
    const message = (await messagesOf(deps.db, chat.id)).find((m) => m.id === ctx.params.id);
    if (!message) throw notFound;
    return { message, chat };
  };

  router.get('/messages/:id/stream', async (ctx) => {
    const { message } = await messageOf(ctx);
    const reply = runs.live(message.id);
    ctx.respond = false;
    ctx.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    const send = (event: string, data: unknown) => ctx.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (!reply) {
      send('done', { status: message.status });
      ctx.res.end();
      return;
    }
    await new Promise<void>((resolve) => {
      const detach = reply.attach((e) => {
        if (e.delta) send('delta', { text: e.delta });
        if (e.done) {
          send('done', {});
          resolve();
        }
      });
      ctx.req.on('close', () => { detach(); resolve(); });
    });
    ctx.res.end();
  });

  router.post('/messages/:id/stop', async (ctx) => {
    const { message, chat } = await messageOf(ctx);
    await spender(ctx, chat.id);
    ctx.body = { id: message.id, stopped: runs.stop(message.id) };
  });

  router.get('/messages/:id/timeline', async (ctx) => {
    const { message } = await messageOf(ctx);
    if (!message.requestId) throw new NotFoundError('This message has no run.', { code: 'run_not_found' });
    ctx.body = { object: 'list', request_id: message.requestId, data: await runTimeline(deps.temporal.client, message.requestId) };
  });

  /** The generation a `regenerate` names: a finished generation's message of this chat (a 404 in the route's shape otherwise). */
  async function regeneratedGeneration(chat: Chat, regenerate: unknown): Promise<Message | undefined> {
    if (regenerate === undefined) return undefined;
    const found = typeof regenerate === 'string' ? (await messagesOf(deps.db, chat.id)).find((m) => m.id === regenerate) : undefined;
    if (!found || found.role !== 'assistant' || !found.generation || !found.parentId) {
      throw new NotFoundError(`No generation with id '${String(regenerate)}' in this chat.`, { code: 'message_not_found', param: 'regenerate' });
    }
    return found;
  }

  /**
   * The member's prompt and the running assistant message a generation fills in (the prompt titles a new chat);
   * a generation made `again` answers that one's prompt, a new branch beside it.
   */
  async function startGenerationMessages(ctx: GatewayContext, chat: Chat, prompt: string, run: { kind: Message['kind']; model: string; requestId: string; files?: string[]; generation: Message['generation']; again?: Message }): Promise<Message> {
    const promptId = run.again ? run.again.parentId as string : (await addMessage(deps.db, {
      chatId: chat.id, role: 'user', content: prompt, files: run.files, model: null, requestId: null, status: 'sent', userId: reader(ctx).userId,
      parentId: chat.currentMessageId ?? (await messagesOf(deps.db, chat.id)).at(-1)?.id ?? null,
    })).id;
    const assistant = await addMessage(deps.db, { chatId: chat.id, role: 'assistant', kind: run.kind, content: '', model: run.model, requestId: run.requestId, status: 'running', userId: reader(ctx).userId, generation: run.generation, parentId: promptId });
    if (chat.title === 'New chat' && !run.again) await updateChat(deps.db, chat, { title: titleFrom(prompt) ?? undefined });
    return assistant;
  }

  /** Video messages follow their jobs (the page shows each job's progress). */
  async function videoJobsOf(chat: Chat, messages: Message[]): Promise<Map<string, VideoJob>> {
    const jobs = new Map<string, VideoJob>();
    for (const m of messages) {
      if (m.kind !== 'video' || !m.requestId) continue;
      const job = await findVideoJob(deps.db, chat.workspaceId, m.requestId);
      if (!job) continue;
      jobs.set(m.id, job);
      // Normally the job's workflow has finished the message already; this covers a report still on its way.
      if (m.status === 'running' && (job.status === 'succeeded' || job.status === 'failed') && await finishVideoMessage(deps.db, deps.storage, job.id) === 'finished') {
        Object.assign(m, (await messagesOf(deps.db, chat.id)).find((f) => f.id === m.id));
      }
    }
    return jobs;
  }

  return router;
}

function chatJson(c: Chat, extra: Record<string, unknown>) {
  return {
    id: c.id, object: 'playground.chat', title: c.title, model: c.model, system_prompt: c.systemPrompt, params: c.params, project_id: c.projectId,
    owner_id: c.userId, visibility: c.visibility, workspace_access: c.workspaceAccess, current_message_id: c.currentMessageId, archived: c.archivedAt !== null, created_at: c.createdAt, updated_at: c.updatedAt, ...extra,
  };
}

function messageJson(m: Message) {
  return {
    id: m.id, object: 'playground.message', role: m.role, kind: m.kind, content: m.content, files: m.files, model: m.model, request_id: m.requestId,
    status: m.status, error: m.error, error_code: m.errorCode, user_id: m.userId, parent_id: m.parentId, created_at: m.createdAt, generation: m.generation ?? null,
  };
}

function jobJson(j: VideoJob) {
  return { id: j.id, status: j.status, progress: j.progress, error: j.error, model_used: j.modelUsed };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
