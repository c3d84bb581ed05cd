/**
 * Every `/v1` route as the security tests call it: its permission, where it takes an id or a cursor, and a
 * request it accepts. roles.test.ts checks this table against the routers, so a new route cannot be left
 * out of the security tests.
 */
import { randomUUID } from 'node:crypto';
import type { Permission } from '../../domain/permissions';
import { encodeAudio } from '../../simulator/media/audio';
import { synthesizeSpeech } from '../../simulator/media/synth';
import type { Tenant } from './gateway';
import { pngImage } from './media';
import { multipartBody, type FormPart } from './multipart-body';

export type JsonBody = Record<string, unknown>;

export interface RouteCase {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** As the router names it: `/v1/files/:fileId`. */
  route: string;
  permission: Permission;
  /** A body the route accepts (JSON, or a multipart form). */
  body?: () => Promise<{ json: JsonBody } | { form: FormPart[] }>;
  /** Headers the route requires besides auth and content type. */
  headers?: () => Record<string, string>;
  /** Query parameters that page through a list. */
  cursors?: string[];
  /** Errors in Anthropic's shape (`{type: "error", error: {type, message}}`, no code), as on the Messages API. */
  anthropicErrors?: boolean;
}

const speech = synthesizeSpeech('Check my role first.', 'alloy', 1);
export const WAV = encodeAudio('wav', speech);

export const ROUTES: RouteCase[] = [
  { method: 'GET', route: '/v1/models', permission: 'models.read', cursors: ['after', 'before'] },
  { method: 'GET', route: '/v1/models/:slug', permission: 'models.read' },
  { method: 'GET', route: '/v1/ping', permission: 'models.read' },
  { method: 'GET', route: '/v1/fallback-chains', permission: 'settings.read' },
  { method: 'PUT', route: '/v1/fallback-chains/:model', permission: 'settings.manage', body: async () => ({ json: { chain: ['sim-chat-mini'] } }) },
  { method: 'DELETE', route: '/v1/fallback-chains/:model', permission: 'settings.manage' },
  // Without a BYOK key ring (the test gateways here have none) the three below answer 403 `byok_not_configured`.
  { method: 'GET', route: '/v1/provider-keys', permission: 'provider_keys.manage' },
  { method: 'POST', route: '/v1/provider-keys', permission: 'provider_keys.manage', body: async () => ({ json: { provider: 'openai', key: 'sk-role-check-0000' } }) },
  { method: 'DELETE', route: '/v1/provider-keys/:provider', permission: 'provider_keys.manage' },
  {
    method: 'POST', route: '/v1/files', permission: 'files.write',
    body: async () => ({ form: [{ name: 'purpose', value: 'assistants' }, { name: 'file', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('notes') }] }),
  },
  { method: 'GET', route: '/v1/files', permission: 'files.read', cursors: ['after', 'before'] },
  { method: 'GET', route: '/v1/files/:fileId', permission: 'files.read' },
  { method: 'GET', route: '/v1/files/:fileId/content', permission: 'files.read' },
  { method: 'DELETE', route: '/v1/files/:fileId', permission: 'files.write' },
  { method: 'GET', route: '/v1/videos/generations/:jobId', permission: 'jobs.read' },
  { method: 'GET', route: '/v1/requests/:id', permission: 'jobs.read' },
  { method: 'GET', route: '/v1/videos', permission: 'jobs.read', cursors: ['after'] },
  { method: 'GET', route: '/v1/videos/:videoId', permission: 'jobs.read' },
  { method: 'GET', route: '/v1/videos/:videoId/content', permission: 'jobs.read' },
  { method: 'DELETE', route: '/v1/videos/:videoId', permission: 'files.write' },
  { method: 'POST', route: '/v1/batches', permission: 'batches.write', body: async () => ({ json: { input_file_id: 'file_missing', endpoint: '/v1/chat/completions', completion_window: '24h' } }) },
  { method: 'GET', route: '/v1/batches', permission: 'jobs.read', cursors: ['after'] },
  { method: 'GET', route: '/v1/batches/:batchId', permission: 'jobs.read' },
  { method: 'POST', route: '/v1/batches/:batchId/cancel', permission: 'batches.write' },
  {
    method: 'POST', route: '/v1/messages/batches', permission: 'batches.write', anthropicErrors: true,
    body: async () => ({ json: { requests: [{ custom_id: 'one', params: { model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } }] } }),
  },
  { method: 'GET', route: '/v1/messages/batches', permission: 'jobs.read', anthropicErrors: true, cursors: ['after_id', 'before_id'] },
  { method: 'GET', route: '/v1/messages/batches/:batchId', permission: 'jobs.read', anthropicErrors: true },
  { method: 'POST', route: '/v1/messages/batches/:batchId/cancel', permission: 'batches.write', anthropicErrors: true },
  { method: 'DELETE', route: '/v1/messages/batches/:batchId', permission: 'batches.write', anthropicErrors: true },
  { method: 'GET', route: '/v1/messages/batches/:batchId/results', permission: 'jobs.read', anthropicErrors: true },
  { method: 'GET', route: '/v1/billing/balance', permission: 'billing.read' },
  { method: 'GET', route: '/v1/billing/ledger', permission: 'billing.read' },
  { method: 'GET', route: '/v1/responses/:responseId', permission: 'files.read' },
  { method: 'DELETE', route: '/v1/responses/:responseId', permission: 'files.write' },
  { method: 'GET', route: '/v1/responses/:responseId/input_items', permission: 'files.read', cursors: ['after'] },
  // Without a payment processor (the test gateways have none) the two below answer 403 `payments_not_configured`.
  {
    method: 'POST', route: '/v1/billing/topups', permission: 'billing.manage',
    body: async () => ({ json: { credits: 500 } }), headers: () => ({ 'idempotency-key': randomUUID() }),
  },
  { method: 'GET', route: '/v1/billing/payments', permission: 'billing.read' },
  { method: 'GET', route: '/v1/billing/auto-topup', permission: 'billing.read' },
  { method: 'PUT', route: '/v1/billing/auto-topup', permission: 'billing.manage', body: async () => ({ json: { enabled: false } }) },
  { method: 'GET', route: '/v1/budget/alerts', permission: 'budget_alerts.manage', cursors: ['after', 'before'] },
  {
    method: 'POST', route: '/v1/budget/alerts', permission: 'budget_alerts.manage',
    body: async () => ({ json: { threshold_type: 'credits', threshold: 10, channels: { email: { to: ['ops@example.com'] } } } }),
  },
  { method: 'GET', route: '/v1/budget/alerts/:alertId', permission: 'budget_alerts.manage' },
  { method: 'DELETE', route: '/v1/budget/alerts/:alertId', permission: 'budget_alerts.manage' },
  { method: 'POST', route: '/v1/chat/completions', permission: 'models.use', body: async () => ({ json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } }) },
  { method: 'POST', route: '/v1/responses', permission: 'models.use', body: async () => ({ json: { model: 'sim-chat', input: 'hi' } }) },
  { method: 'POST', route: '/v1/messages', permission: 'models.use', anthropicErrors: true, body: async () => ({ json: { model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } }) },
  { method: 'POST', route: '/v1/messages/count_tokens', permission: 'models.read', anthropicErrors: true, body: async () => ({ json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } }) },
  { method: 'POST', route: '/v1/completions', permission: 'models.use', body: async () => ({ json: { model: 'sim-chat', prompt: 'hi' } }) },
  { method: 'POST', route: '/v1/moderations', permission: 'models.use', body: async () => ({ json: { model: 'sim-moderation', input: 'a quiet lake' } }) },
  { method: 'POST', route: '/v1/embeddings', permission: 'models.use', body: async () => ({ json: { model: 'sim-embed', input: 'a quiet lake' } }) },
  { method: 'POST', route: '/v1/images/generations', permission: 'models.use', body: async () => ({ json: { model: 'sim-image', prompt: 'a kite' } }) },
  {
    method: 'POST', route: '/v1/images/edits', permission: 'models.use',
    body: async () => ({ form: [{ name: 'model', value: 'sim-image' }, { name: 'prompt', value: 'tint it' }, { name: 'image', filename: 'a.png', contentType: 'image/png', data: await pngImage(16, 16) }] }),
  },
  { method: 'POST', route: '/v1/audio/speech', permission: 'models.use', body: async () => ({ json: { model: 'sim-tts', voice: 'alloy', input: 'hello' } }) },
  { method: 'POST', route: '/v1/audio/transcriptions', permission: 'models.use', body: async () => ({ json: { model: 'sim-transcribe', file: WAV.toString('base64'), filename: 'speech.wav' } }) },
  { method: 'POST', route: '/v1/music/generations', permission: 'models.use', body: async () => ({ json: { model: 'sim-music', prompt: 'a calm loop', duration: 5 } }) },
  {
    method: 'POST', route: '/v1/audio/translations', permission: 'models.use',
    body: async () => ({ form: [{ name: 'model', value: 'sim-transcribe' }, { name: 'file', filename: 'speech.wav', contentType: 'audio/wav', data: WAV }] }),
  },
  {
    method: 'POST', route: '/v1/images/variations', permission: 'models.use',
    body: async () => ({ form: [{ name: 'model', value: 'sim-image' }, { name: 'image', filename: 'a.png', contentType: 'image/png', data: await pngImage(16, 16) }] }),
  },
  { method: 'POST', route: '/v1/videos', permission: 'models.use', body: async () => ({ json: { model: 'sim-video', prompt: 'a kite', seconds: '4', size: '640x360' } }) },
  { method: 'POST', route: '/v1/videos/generations', permission: 'models.use', body: async () => ({ json: { model: 'sim-video', prompt: 'a kite', duration: 2, resolution: '360p' } }) },
];

/** Fills the route's path parameters (every one with `id`, or a harmless default). */
export function pathOf(route: RouteCase, id?: string): string {
  const defaults: Record<string, string> = { slug: 'sim-chat', model: 'sim-chat', fileId: 'file_missing', jobId: 'vgen_missing', alertId: 'alert_missing', responseId: 'resp_missing', id: 'req_missing', videoId: 'video_missing', batchId: 'batch_missing' };
  return route.route.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(id ?? defaults[name]));
}

export function hasPathId(route: RouteCase): boolean {
  return route.route.includes('/:');
}

/** Calls the route as `tenant`: its own body unless `body` overrides it (raw text is sent as JSON text). */
export async function callRoute(tenant: Tenant, route: RouteCase, opts: { id?: string; query?: Record<string, string>; rawJson?: string } = {}): Promise<Response> {
  const query = opts.query ? `?${new URLSearchParams(opts.query)}` : '';
  const headers: Record<string, string> = { ...(route.headers?.() ?? {}) };
  let body: RequestInit['body'];
  if (opts.rawJson !== undefined) {
    headers['content-type'] = 'application/json';
    body = opts.rawJson;
  } else if (route.body) {
    const made = await route.body();
    if ('json' in made) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(made.json);
    } else {
      const form = multipartBody(made.form);
      headers['content-type'] = form.contentType;
      body = form.body;
    }
  }
  return tenant.fetch(`${pathOf(route, opts.id)}${query}`, { method: route.method, headers, body });
}
