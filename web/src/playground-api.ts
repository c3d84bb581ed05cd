/** The Playground's part of the typed client (/api/playground, session cookie). */
import { request } from './api';

export interface Receipt {
  requestId: string; status: string; endpoint: string; modelRequested: string; modelUsed: string | null; fallbackDepth: number; deployment?: string | null;
  inputTokens: number; outputTokens: number; units: Record<string, number> | null; latencyMs: number | null; credits: number;
  /** Whose provider key served: the workspace's own ("your key") or the platform's. */
  keySource?: 'platform' | 'workspace';
  ledger: Array<{ kind: string; amountMicro: number; model: string | null }>;
}
export interface ChatMessage {
  id: string; role: 'user' | 'assistant'; kind: 'text' | 'image' | 'audio' | 'video'; content: string; files: string[]; model: string | null; request_id: string | null;
  status: 'sent' | 'running' | 'completed' | 'stopped' | 'failed'; error: string | null;
  /** The failure's code (`insufficient_credits`, `provider_not_configured`, ...): the app links to its fix. */
  error_code?: string | null; bookmarked: boolean; receipt: Receipt | null; user_id?: string | null;
  /** A video message's durable job. */
  job?: { id: string; status: 'queued' | 'processing' | 'succeeded' | 'failed'; progress: number; error: { message: string } | null };
  /** The request a generation was made with: sending it again (regenerate) makes another with the same parameters. */
  generation?: { endpoint: string; body: Record<string, unknown> } | null;
  /** The message's files with their names and types (in a chat read). */
  attachments?: Array<{ id: string; filename: string | null; content_type: string | null }>;
  /** The message this one follows; its siblings (itself included, oldest first) are the branches at this turn. */
  parent_id?: string | null;
  siblings?: string[];
}
/** The media a chat can generate besides images, each at its own endpoint. */
export type MediaKind = 'speech' | 'videos' | 'music' | 'transcriptions';
export interface ChatSummary {
  id: string; title: string; model: string; system_prompt: string; params: Record<string, unknown>; owner_id: string; project_id: string | null;
  visibility: 'private' | 'workspace'; workspace_access: 'read' | 'continue'; access: 'read' | 'continue' | 'owner'; bookmarked: boolean; updated_at: number;
  /** Hidden from the chat list (the Archived view lists it). */
  archived: boolean;
}
export interface ChatDetail extends ChatSummary {
  total_credits: number; messages: ChatMessage[];
  /** The names of the messages' authors, by user id. */
  authors?: Record<string, string>; shares?: Array<{ userId: string; email: string; access: 'read' | 'continue' }>;
}
export interface Project { id: string; name: string; instructions: string; pinned: boolean; createdAt: number }
export interface PlaygroundFile { id: string; filename: string; content_type: string; bytes: number; chat_id: string | null; project_id: string | null }
export interface Storage { used_bytes: number; limit_bytes: number; playground_bytes: number }
export type Upload = { filename: string; content_type: string; data: string };
export interface TimelineStep { step: string; at: number; detail?: string }

/** A picked file as an upload body (base64, as the JSON endpoints take it). */
export async function uploadOf(file: File): Promise<Upload> {
  let data = '';
  new Uint8Array(await file.arrayBuffer()).forEach((c) => { data += String.fromCharCode(c); });
  return { filename: file.name, content_type: file.type || 'application/octet-stream', data: btoa(data) };
}

const base = '/api/playground';
export const playground = {
  chats: (search = '', archived = false) => request<{ data: ChatSummary[] }>('GET', `${base}/chats?${new URLSearchParams({ ...(search ? { search } : {}), ...(archived ? { archived: 'true' } : {}) })}`),
  /** A chat with the branch on show, or the one through message `branch` (without changing what the chat shows). */
  chat: (id: string, branch?: string) => request<ChatDetail>('GET', `${base}/chats/${id}${branch ? `?branch=${encodeURIComponent(branch)}` : ''}`),
  createChat: (b: { model: string; title?: string; system_prompt?: string; project_id?: string }) => request<ChatSummary>('POST', `${base}/chats`, b),
  updateChat: (id: string, b: Record<string, unknown>) => request<ChatSummary>('PATCH', `${base}/chats/${id}`, b),
  deleteChat: (id: string) => request('DELETE', `${base}/chats/${id}`),
  send: (id: string, b: { content?: string; files?: string[]; model?: string; params?: Record<string, unknown>; from?: string; regenerate?: string }) =>
    request<{ assistant: ChatMessage }>('POST', `${base}/chats/${id}/messages`, b),
  generateImage: (id: string, b: { model: string; prompt: string; size?: string }) => request('POST', `${base}/chats/${id}/images`, b),
  generate: (id: string, kind: MediaKind, b: Record<string, unknown>) => request<{ assistant: ChatMessage }>('POST', `${base}/chats/${id}/${kind}`, b),
  /** Makes generation `messageId` again from its kept request: a new branch beside it. */
  regenerate: (id: string, messageId: string, generation: NonNullable<ChatMessage['generation']>) =>
    request<{ assistant: ChatMessage }>('POST', `${base}/chats/${id}/${generation.endpoint}`, { ...generation.body, regenerate: messageId }),
  upload: (id: string, b: Upload) => request<PlaygroundFile>('POST', `${base}/chats/${id}/files`, b),
  stop: (messageId: string) => request('POST', `${base}/messages/${messageId}/stop`),
  timeline: (messageId: string) => request<{ data: TimelineStep[] }>('GET', `${base}/messages/${messageId}/timeline`),
  share: (id: string, b: { visibility: string; workspace_access?: string; members?: Array<{ user_id: string; access: string }> }) => request('PUT', `${base}/chats/${id}/sharing`, b),
  bookmark: (chatId: string, messageId: string | null, on: boolean) =>
    request(on ? 'PUT' : 'DELETE', `${base}/chats/${chatId}${messageId ? `/messages/${messageId}` : ''}/bookmark`),
  bookmarks: () => request<{ data: Array<{ chat_id: string; message_id: string | null; chat_title: string; excerpt: string }> }>('GET', `${base}/bookmarks`),
  fileUrl: (id: string) => `${base}/files/${id}`,
  projects: () => request<{ data: Project[] }>('GET', `${base}/projects`),
  project: (id: string) => request<Project & { owned: boolean; files: PlaygroundFile[] }>('GET', `${base}/projects/${id}`),
  projectChats: (id: string) => request<{ data: ChatSummary[] }>('GET', `${base}/chats?project_id=${encodeURIComponent(id)}`),
  createProject: (b: { name: string; instructions?: string }) => request<Project>('POST', `${base}/projects`, b),
  updateProject: (id: string, b: { name?: string; instructions?: string; pinned?: boolean }) => request<Project>('PATCH', `${base}/projects/${id}`, b),
  deleteProject: (id: string) => request('DELETE', `${base}/projects/${id}`),
  uploadProjectFile: (id: string, b: Upload) => request<PlaygroundFile>('POST', `${base}/projects/${id}/files`, b),
  deleteFile: (id: string) => request('DELETE', `${base}/files/${id}`),
  storage: () => request<Storage>('GET', `${base}/storage`),
  videoUrl: (messageId: string) => `${base}/messages/${messageId}/video`,
  streamUrl: (messageId: string) => `${base}/messages/${messageId}/stream`,
};
