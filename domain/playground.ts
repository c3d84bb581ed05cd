/**
 * Playground chats, owned by the workspace and started by a member. Who may see a chat: its owner, every
 * member when it is shared with the workspace, and the members it is shared with by name; to everyone
 * else it does not exist (404). `continue` access lets a member with the Playground permission send
 * messages (spending the workspace's credits); `read` only reads.
 */
import type { Knex } from 'knex';
import { Lexer, type Token } from 'marked';
import { newId } from '../core/ids';
import { InvalidRequestError, NotFoundError, PermissionDeniedError } from '../core/errors';

export type Access = 'read' | 'continue' | 'owner';
export type Visibility = 'private' | 'workspace';

export interface Chat {
  id: string;
  workspaceId: string;
  userId: string;
  projectId: string | null;
  title: string;
  model: string;
  systemPrompt: string;
  params: Record<string, unknown>;
  visibility: Visibility;
  workspaceAccess: 'read' | 'continue';
  /** The last message of the branch on show (null: no messages yet). */
  currentMessageId: string | null;
  /** When the owner archived it (hidden from the chat list); null: not archived. */
  archivedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface Message {
  id: string;
  chatId: string;
  role: 'user' | 'assistant' | 'system';
  kind: 'text' | 'image' | 'audio' | 'video';
  content: string;
  files: string[];
  model: string | null;
  requestId: string | null;
  status: 'sent' | 'running' | 'completed' | 'stopped' | 'failed';
  error: string | null;
  /** The failure's code (`insufficient_credits`, `provider_not_configured`, ...), when it had one. */
  errorCode: string | null;
  userId: string | null;
  /** The message this one follows (null: the chat's first turn); siblings (same parent) are branches. */
  parentId: string | null;
  createdAt: number;
  /** The request a generation was made with (its endpoint under /chats/:id/ and the body sent): regenerating sends it again. */
  generation?: { endpoint: string; body: Record<string, unknown> } | null;
}

export interface Reader { workspaceId: string; userId: string }

const seconds = (d: Date | string) => Math.floor(new Date(d).getTime() / 1000);

function toChat(r: any): Chat {
  return {
    id: r.id, workspaceId: r.workspace_id, userId: r.user_id, projectId: r.project_id, title: r.title, model: r.model, systemPrompt: r.system_prompt,
    params: r.params ?? {}, visibility: r.visibility, workspaceAccess: r.workspace_access, currentMessageId: r.current_message_id ?? null, archivedAt: r.archived_at ? seconds(r.archived_at) : null, createdAt: seconds(r.created_at), updatedAt: seconds(r.updated_at),
  };
}

export function toMessage(r: any): Message {
  return {
    id: r.id, chatId: r.chat_id, role: r.role, kind: r.kind, content: r.content, files: r.files ?? [], model: r.model, requestId: r.request_id,
    status: r.status, error: r.error, errorCode: r.error_code ?? null, userId: r.user_id, parentId: r.parent_id ?? null, createdAt: seconds(r.created_at), generation: r.generation ?? null,
  };
}

const RANK: Record<Access, number> = { read: 0, continue: 1, owner: 2 };

/**
 * Chats `reader` may see, newest first, with the access each gives them; `search` matches titles and message
 * text. Archived chats are left out, or are the only ones with `archived`.
 */
export async function listChats(db: Knex, reader: Reader, opts: { search?: string; projectId?: string; archived?: boolean } = {}): Promise<Array<Chat & { access: Access; bookmarked: boolean }>> {
  const q = db('playground_chats as c')
    .leftJoin('playground_shares as s', function () { this.on('s.chat_id', 'c.id').andOn('s.user_id', db.raw('?', [reader.userId])); })
    .leftJoin('playground_bookmarks as b', function () { this.on('b.chat_id', 'c.id').andOn('b.user_id', db.raw('?', [reader.userId])).andOn('b.message_id', db.raw("''")); })
    .where('c.workspace_id', reader.workspaceId)
    .andWhere((w) => { void w.where('c.user_id', reader.userId).orWhere('c.visibility', 'workspace').orWhereNotNull('s.user_id'); })
    .select('c.*', 's.access as share_access', 'b.chat_id as bookmark')
    .orderBy([{ column: 'b.chat_id', order: 'asc', nulls: 'last' } as any, { column: 'c.updated_at', order: 'desc' }])
    .limit(200);
  if (opts.projectId) q.where('c.project_id', opts.projectId);
  if (opts.archived) q.whereNotNull('c.archived_at');
  else q.whereNull('c.archived_at');
  if (opts.search?.trim()) {
    const like = `%${opts.search.trim().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    q.andWhere((w) => { void w.whereILike('c.title', like).orWhereExists(db('playground_messages as m').whereRaw('m.chat_id = c.id').andWhereILike('m.content', like)); });
  }
  return (await q).map((r: any) => ({ ...toChat(r), access: accessOf(toChat(r), reader, r.share_access), bookmarked: Boolean(r.bookmark) }));
}

function accessOf(chat: Chat, reader: Reader, shareAccess: 'read' | 'continue' | null): Access {
  if (chat.userId === reader.userId) return 'owner';
  const levels: Access[] = [];
  if (chat.visibility === 'workspace') levels.push(chat.workspaceAccess);
  if (shareAccess) levels.push(shareAccess);
  return levels.sort((a, b) => RANK[b] - RANK[a])[0] ?? 'read';
}

/** The chat if `reader` has at least `need` on it; 404 otherwise (a chat one may not read does not exist for them). */
export async function chatFor(db: Knex, reader: Reader, chatId: string, need: Access = 'read'): Promise<Chat & { access: Access }> {
  const row = await db('playground_chats').where({ id: chatId, workspace_id: reader.workspaceId }).first();
  const share = row ? await db('playground_shares').where({ chat_id: chatId, user_id: reader.userId }).first('access') : null;
  const chat = row ? toChat(row) : null;
  const visible = chat && (chat.userId === reader.userId || chat.visibility === 'workspace' || share);
  if (!chat || !visible) throw new NotFoundError(`No chat with id '${chatId}'.`, { code: 'chat_not_found' });
  const access = accessOf(chat, reader, share?.access ?? null);
  if (RANK[access] < RANK[need]) {
    throw new PermissionDeniedError(need === 'owner' ? 'Only the chat\'s owner may do this.' : 'This chat is shared with you to read only.', { code: need === 'owner' ? 'not_chat_owner' : 'read_only_share' });
  }
  return { ...chat, access };
}

export async function createChat(db: Knex, reader: Reader, opts: { title?: unknown; model: string; systemPrompt?: unknown; params?: unknown; projectId?: unknown }): Promise<Chat> {
  if (opts.projectId !== undefined && opts.projectId !== null) await projectFor(db, reader, String(opts.projectId));
  const [row] = await db('playground_chats').insert({
    id: newId('chat'), workspace_id: reader.workspaceId, user_id: reader.userId, model: opts.model,
    title: typeof opts.title === 'string' && opts.title.trim() ? opts.title.trim().slice(0, 200) : 'New chat',
    system_prompt: typeof opts.systemPrompt === 'string' ? opts.systemPrompt : '',
    params: JSON.stringify(isObject(opts.params) ? opts.params : {}), project_id: opts.projectId ?? null,
  }, '*');
  return toChat(row);
}

const TITLE_WORDS = 6;
const TITLE_CHARS = 48;

/** The words of markdown as read (emphasis, links, code spans as their text); code blocks and HTML left out; blocks on lines of their own. */
function plainText(tokens: Token[]): string {
  return tokens.map((t): string => {
    if (t.type === 'code' || t.type === 'html' || t.type === 'hr' || t.type === 'space') return '\n';
    if (t.type === 'list') return (t.items as Token[]).map((i) => plainText((i as Token & { tokens: Token[] }).tokens)).join('\n');
    if (t.type === 'table') return '\n';
    const inner = 'tokens' in t && Array.isArray(t.tokens) ? plainText(t.tokens) : 'text' in t && typeof t.text === 'string' ? t.text : '';
    return ['paragraph', 'heading', 'blockquote'].includes(t.type) ? `${inner}\n` : inner;
  }).join('');
}

/**
 * A chat's automatic title, from its first prompt and without asking a model: the first sentence (or line)
 * of its text as read, markdown removed (a prompt of code alone: its code), cut to six words and 48 characters ("…" where it was cut).
 * Null when the prompt has no words (an attachment alone): the chat keeps its title.
 */
export function titleFrom(prompt: string): string | null {
  const tokens = new Lexer().lex(prompt);
  // A prompt of code alone is titled by its code.
  const text = plainText(tokens).trim() || tokens.flatMap((t) => (t.type === 'code' ? [t.text as string] : [])).join('\n').trim() || prompt.trim();
  const sentence = text.split(/(?<=[.!?])\s|\n/).map((l) => l.trim()).find(Boolean) ?? '';
  const words = sentence.split(/\s+/).filter(Boolean);
  let title = words.slice(0, TITLE_WORDS).join(' ');
  let cut = words.length > TITLE_WORDS;
  if (title.length > TITLE_CHARS) {
    const space = title.lastIndexOf(' ', TITLE_CHARS);
    title = title.slice(0, space > TITLE_CHARS / 2 ? space : TITLE_CHARS);
    cut = true;
  }
  title = title.replace(/[\s,;:.\-–—]+$/, '');
  if (!title) return null;
  return cut && !/[?!]$/.test(title) ? `${title}…` : title;
}

/** Settings the owner (or a member who may continue) changes: title, model, system prompt, parameters, project; archived (the owner's). */
export async function updateChat(db: Knex, chat: Chat, patch: Record<string, unknown>): Promise<Chat> {
  const update: Record<string, unknown> = { updated_at: db.fn.now() };
  if (patch.title !== undefined) {
    if (typeof patch.title !== 'string' || !patch.title.trim()) throw new InvalidRequestError('A chat\'s title cannot be empty.', { param: 'title' });
    update.title = patch.title.trim().slice(0, 200);
  }
  if (typeof patch.model === 'string') update.model = patch.model;
  if (typeof patch.system_prompt === 'string') update.system_prompt = patch.system_prompt;
  if (isObject(patch.params)) update.params = JSON.stringify(patch.params);
  if (patch.project_id !== undefined) update.project_id = patch.project_id;
  if (patch.archived !== undefined) {
    if (typeof patch.archived !== 'boolean') throw new InvalidRequestError('archived must be true or false.', { param: 'archived' });
    update.archived_at = patch.archived ? db.fn.now() : null;
  }
  const [row] = await db('playground_chats').where({ id: chat.id }).update(update, '*');
  return toChat(row);
}

export async function messagesOf(db: Knex, chatId: string): Promise<Message[]> {
  return (await db('playground_messages').where({ chat_id: chatId }).orderBy('position')).map(toMessage);
}

/** Adds a message after `parentId` (null: a first turn) and shows its branch. */
export async function addMessage(db: Knex, m: Omit<Message, 'id' | 'createdAt' | 'error' | 'errorCode' | 'files' | 'kind'> & { files?: string[]; kind?: Message['kind'] }): Promise<Message> {
  const [row] = await db('playground_messages').insert({
    id: newId('msg'), chat_id: m.chatId, role: m.role, kind: m.kind ?? 'text', content: m.content, files: JSON.stringify(m.files ?? []), model: m.model,
    request_id: m.requestId, status: m.status, user_id: m.userId, parent_id: m.parentId, ...(m.generation ? { generation: JSON.stringify(m.generation) } : {}),
  }, '*');
  await db('playground_chats').where({ id: m.chatId }).update({ updated_at: db.fn.now(), current_message_id: row.id });
  return toMessage(row);
}

export async function finishMessage(db: Knex, id: string, done: { status: Message['status']; content?: string; files?: string[]; error?: string | null; errorCode?: string | null }): Promise<void> {
  await db('playground_messages').where({ id }).update({
    status: done.status, ...(done.content !== undefined ? { content: done.content } : {}), ...(done.files ? { files: JSON.stringify(done.files) } : {}), error: done.error ?? null, error_code: done.errorCode ?? null,
  });
}

/**
 * Stores a streaming reply's text so far (while it is still running), so that the text outlives the API
 * process holding the stream: a message found running after that process died keeps what it had.
 */
export async function saveReplySoFar(db: Knex, id: string, content: string): Promise<void> {
  await db('playground_messages').where({ id, status: 'running' }).update({ content });
}

// Branches: a chat is a tree of messages; the one on show runs from a first turn to `currentMessageId`.

export interface BranchMessage extends Message {
  /** The message's siblings (itself included), oldest first: the branches one may switch between here. */
  siblings: string[];
}

/** The messages from the first turn to `leafId` (the chat's current message when not given), each with its siblings. */
export function branchTo(all: Message[], leafId: string | null): BranchMessage[] {
  const byId = new Map(all.map((m) => [m.id, m]));
  const path: Message[] = [];
  for (let m = leafId ? byId.get(leafId) : undefined; m; m = m.parentId ? byId.get(m.parentId) : undefined) path.unshift(m);
  return path.map((m) => ({ ...m, siblings: all.filter((s) => s.parentId === m.parentId).map((s) => s.id) }));
}

/** The last message of the branch through `messageId`: from there on, the newest reply or prompt at each turn. */
export function latestUnder(all: Message[], messageId: string): string {
  let id = messageId;
  for (;;) {
    const next = all.filter((m) => m.parentId === id).at(-1);
    if (!next) return id;
    id = next.id;
  }
}

/** The branch shown: through `through` (a message of it) when given, else the chat's current one. */
export async function branchOf(db: Knex, chat: Chat, through?: string): Promise<BranchMessage[]> {
  const all = await messagesOf(db, chat.id);
  if (through !== undefined && !all.some((m) => m.id === through)) throw new NotFoundError(`No message with id '${through}' in this chat.`, { code: 'message_not_found', param: 'branch' });
  return branchTo(all, through !== undefined ? latestUnder(all, through) : chat.currentMessageId ?? all.at(-1)?.id ?? null);
}

/** Shows the branch through `messageId` (the chat remembers it, for every reader and after a reload). */
export async function selectBranch(db: Knex, chat: Chat, messageId: string): Promise<void> {
  const all = await messagesOf(db, chat.id);
  if (!all.some((m) => m.id === messageId)) throw new NotFoundError(`No message with id '${messageId}' in this chat.`, { code: 'message_not_found', param: 'branch' });
  await db('playground_chats').where({ id: chat.id }).update({ current_message_id: latestUnder(all, messageId) });
}

export async function messageByRequest(db: Knex, requestId: string): Promise<Message | null> {
  const row = await db('playground_messages').where({ request_id: requestId }).first();
  return row ? toMessage(row) : null;
}

// Sharing

export async function sharesOf(db: Knex, chatId: string): Promise<Array<{ userId: string; email: string; name: string; access: 'read' | 'continue' }>> {
  const rows = await db('playground_shares as s').join('users as u', 'u.id', 's.user_id').where('s.chat_id', chatId).select('s.user_id', 'u.email', 'u.name', 's.access').orderBy('u.email');
  return rows.map((r: any) => ({ userId: r.user_id, email: r.email, name: r.name, access: r.access }));
}

/** Sets who the chat reaches: the workspace (or not) and the named members (replacing the previous list). */
export async function setSharing(db: Knex, chat: Chat, opts: { visibility: unknown; workspaceAccess?: unknown; members?: unknown }): Promise<void> {
  if (opts.visibility !== 'private' && opts.visibility !== 'workspace') throw new InvalidRequestError("visibility must be 'private' or 'workspace'.", { param: 'visibility' });
  const access = (v: unknown, param: string) => {
    if (v === undefined) return 'read';
    if (v !== 'read' && v !== 'continue') throw new InvalidRequestError(`${param} must be 'read' or 'continue'.`, { param });
    return v;
  };
  const members = Array.isArray(opts.members) ? opts.members : [];
  const shares: Array<{ chat_id: string; user_id: string; access: string }> = [];
  for (const [i, m] of members.entries()) {
    const userId = isObject(m) && typeof m.user_id === 'string' ? m.user_id : null;
    if (!userId) throw new InvalidRequestError('Each member needs a user_id.', { param: `members[${i}].user_id` });
    const member = await db('members').where({ workspace_id: chat.workspaceId, user_id: userId }).first('user_id');
    if (!member) throw new InvalidRequestError(`'${userId}' is not a member of this workspace.`, { param: `members[${i}].user_id` });
    if (userId !== chat.userId) shares.push({ chat_id: chat.id, user_id: userId, access: access(m.access, `members[${i}].access`) });
  }
  await db.transaction(async (trx) => {
    await trx('playground_chats').where({ id: chat.id }).update({ visibility: opts.visibility, workspace_access: access(opts.workspaceAccess, 'workspace_access') });
    await trx('playground_shares').where({ chat_id: chat.id }).delete();
    if (shares.length) await trx('playground_shares').insert(shares);
  });
}

// Bookmarks (a bookmark on the chat itself pins it to the top of the list)

export async function setBookmark(db: Knex, userId: string, chatId: string, messageId: string, on: boolean): Promise<void> {
  const key = { user_id: userId, chat_id: chatId, message_id: messageId };
  if (on) await db('playground_bookmarks').insert(key).onConflict(['user_id', 'chat_id', 'message_id']).ignore();
  else await db('playground_bookmarks').where(key).delete();
}

export async function bookmarksOf(db: Knex, reader: Reader): Promise<Array<{ chatId: string; messageId: string; chatTitle: string; excerpt: string }>> {
  const rows = await db('playground_bookmarks as b')
    .join('playground_chats as c', 'c.id', 'b.chat_id')
    .leftJoin('playground_messages as m', 'm.id', 'b.message_id')
    .where({ 'b.user_id': reader.userId, 'c.workspace_id': reader.workspaceId })
    .orderBy('b.created_at', 'desc')
    .select('b.chat_id', 'b.message_id', 'c.title', 'm.content');
  return rows.map((r: any) => ({ chatId: r.chat_id, messageId: r.message_id, chatTitle: r.title, excerpt: (r.content ?? '').slice(0, 160) }));
}

// Projects (a member's own folders of chats; pinned ones first)

export interface Project { id: string; name: string; instructions: string; pinned: boolean; createdAt: number }

const toProject = (r: any): Project => ({ id: r.id, name: r.name, instructions: r.instructions, pinned: Boolean(r.pinned_at), createdAt: seconds(r.created_at) });

export async function projectsOf(db: Knex, reader: Reader): Promise<Project[]> {
  const rows = await db('playground_projects').where({ workspace_id: reader.workspaceId, user_id: reader.userId })
    .orderBy([{ column: 'pinned_at', order: 'asc', nulls: 'last' } as any, { column: 'name' }]);
  return rows.map(toProject);
}

export async function projectFor(db: Knex, reader: Reader, id: string): Promise<Project> {
  const r = await db('playground_projects').where({ id, workspace_id: reader.workspaceId, user_id: reader.userId }).first();
  if (!r) throw new NotFoundError(`No project with id '${id}'.`, { code: 'project_not_found', param: 'project_id' });
  return toProject(r);
}

/** Creates a project (a name is required) or changes the fields given (name, instructions, pinned). */
export async function saveProject(db: Knex, reader: Reader, b: { id?: string; name?: unknown; instructions?: unknown; pinned?: unknown }): Promise<Project> {
  const fields: Record<string, unknown> = {};
  if (b.name !== undefined || !b.id) {
    if (typeof b.name !== 'string' || !b.name.trim()) throw new InvalidRequestError('A project needs a name.', { param: 'name' });
    fields.name = b.name.trim().slice(0, 120);
  }
  if (b.instructions !== undefined) {
    if (typeof b.instructions !== 'string') throw new InvalidRequestError('instructions must be a string.', { param: 'instructions' });
    fields.instructions = b.instructions;
  }
  if (b.pinned !== undefined) {
    if (typeof b.pinned !== 'boolean') throw new InvalidRequestError('pinned must be true or false.', { param: 'pinned' });
    fields.pinned_at = b.pinned ? db.fn.now() : null;
  }
  if (b.id) {
    await projectFor(db, reader, b.id);
    if (Object.keys(fields).length) await db('playground_projects').where({ id: b.id }).update(fields);
    return projectFor(db, reader, b.id);
  }
  const id = newId('proj');
  await db('playground_projects').insert({ id, workspace_id: reader.workspaceId, user_id: reader.userId, instructions: '', ...fields });
  return projectFor(db, reader, id);
}

// Files (Playground files live under `playground/<workspace>/`, apart from API files; each belongs to one chat or one project)

export interface PlaygroundFile { id: string; chatId: string | null; projectId: string | null; filename: string; contentType: string; bytes: number; storageKey: string }

export function toPlaygroundFile(r: any): PlaygroundFile {
  return { id: r.id, chatId: r.chat_id, projectId: r.project_id ?? null, filename: r.filename, contentType: r.content_type, bytes: Number(r.bytes), storageKey: r.storage_key };
}

/** Records a file of a chat (or of a project); its bytes go under the returned storage key. */
export async function addFile(
  db: Knex | Knex.Transaction,
  f: { chatId?: string | null; projectId?: string | null; workspaceId: string; userId: string | null; filename: string; contentType: string; bytes: number; id?: string },
): Promise<PlaygroundFile> {
  const id = f.id ?? newId('pgf');
  const storageKey = f.projectId ? `playground/${f.workspaceId}/projects/${f.projectId}/${id}` : `playground/${f.workspaceId}/${f.chatId}/${id}`;
  const [row] = await db('playground_files').insert({
    id, workspace_id: f.workspaceId, chat_id: f.projectId ? null : f.chatId, project_id: f.projectId ?? null, user_id: f.userId,
    filename: f.filename, content_type: f.contentType, bytes: f.bytes, storage_key: storageKey,
  }, '*');
  return toPlaygroundFile(row);
}

export async function fileRecord(db: Knex, workspaceId: string, id: string): Promise<PlaygroundFile> {
  const r = await db('playground_files').where({ id, workspace_id: workspaceId }).first();
  if (!r) throw new NotFoundError(`No file with id '${id}'.`, { code: 'file_not_found' });
  return toPlaygroundFile(r);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
