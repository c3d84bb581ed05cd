/**
 * The one typed client for the gateway's JSON API (/api for the session, /v1 for the workspace). The
 * session cookie rides along (same origin); errors arrive in OpenAI's shape and become ApiError.
 */
import type {
  ApiFile, ApiKey, AuditEntry, Batch, BatchPage, ProviderKey, AutoTopUp, Balance, BudgetAlert, CostPage, CreatedKey, FallbackChain, Invite, KeyPreset, LedgerEntry, List, Me, Model, Payment,
  RequestLogPage, RequestOutcome, UsagePage, User,
} from './types';

export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly code: string | null, readonly param: string | null) {
    super(message);
  }
}

/** JSON bodies are sent as JSON; a FormData body (a file upload) as multipart, its boundary set by the browser. */
export async function request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const form = body instanceof FormData;
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: { accept: 'application/json', ...(body === undefined || form ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : form ? body : JSON.stringify(body),
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const err = data?.error ?? {};
    throw new ApiError(res.status, err.message ?? `Request failed (${res.status})`, err.code ?? null, err.param ?? null);
  }
  return data as T;
}

const get = <T>(path: string) => request<T>('GET', path);
const post = <T>(path: string, body: unknown = {}, headers?: Record<string, string>) => request<T>('POST', path, body, headers);
const del = <T>(path: string) => request<T>('DELETE', path);

export const api = {
  me: () => get<Me>('/api/me'),
  signupPolicy: () => get<{ mode: 'open' | 'invite-only' | 'closed'; allowed_domains: string[] }>('/api/auth/signup-policy'),
  signUp: (b: { email: string; password: string; name: string; altcha: string; invite_token?: string }) => post<User>('/api/auth/signup', b),
  signIn: (b: { email: string; password: string }) => post<User>('/api/auth/signin', b),
  /** Confirms the address; with the invitation the account was made from, joins its workspace (`joined`). */
  verify: (b: { token: string; invite_token?: string }) => post<User & { joined: { workspace_id: string; role: string } | null }>('/api/auth/verify', b),
  resend: (email: string) => post('/api/auth/resend', { email }),
  forgot: (email: string) => post('/api/auth/forgot', { email }),
  reset: (token: string, password: string) => post<User>('/api/auth/reset', { token, password }),
  signOut: () => post('/api/auth/signout'),
  signOutAll: () => post('/api/auth/signout-all'),
  contact: (b: { email: string; message: string; altcha: string }) => post('/api/contact', b),
  createWorkspace: (name: string) => post('/api/workspaces', { name }),
  switchWorkspace: (workspaceId: string) => post('/api/workspaces/switch', { workspace_id: workspaceId }),
  invitePreview: (token: string) => get<{ email: string; role: string; status: string; workspace: { id: string; name: string } }>(`/api/invites/${encodeURIComponent(token)}`),
  acceptInvite: (token: string) => post<{ workspace_id: string; role: string }>('/api/invites/accept', { token }),

  renameWorkspace: (name: string) => post('/v1/organization', { name }),
  users: () => get<List<{ id: string; name: string; email: string; role: string; added_at: number }>>('/v1/organization/users'),
  setRole: (userId: string, role: string) => post(`/v1/organization/users/${userId}`, { role }),
  removeUser: (userId: string) => del(`/v1/organization/users/${userId}`),
  transferOwnership: (userId: string) => post('/v1/organization/transfer_ownership', { user_id: userId }),
  invites: () => get<List<Invite>>('/v1/organization/invites'),
  invite: (email: string, role: string) => post<Invite>('/v1/organization/invites', { email, role }),
  revokeInvite: (id: string) => del(`/v1/organization/invites/${id}`),
  presets: () => get<List<KeyPreset>>('/v1/organization/api_key_presets'),
  keys: () => get<List<ApiKey>>('/v1/organization/api_keys'),
  createKey: (b: { name: string; preset: string; rpm?: number; daily_tokens?: number; models?: string[]; cost_cap?: number }) => post<CreatedKey>('/v1/organization/api_keys', b),
  revokeKey: (id: string) => del(`/v1/organization/api_keys/${id}`),
  /** The request log; `filters` as its query string takes them (empty values left out). */
  requestLog: (filters: Record<string, string>, after?: string) => get<RequestLogPage>(`/v1/organization/requests?${requestLogQuery({ ...filters, ...(after ? { after } : {}) })}`),
  requestOutcome: (id: string) => get<RequestOutcome>(`/v1/organization/requests/${encodeURIComponent(id)}`),
  usage: (groupBy: string) => get<UsagePage>(`/v1/organization/usage/completions?group_by=${groupBy}`),
  costs: (groupBy: string) => get<CostPage>(`/v1/organization/costs?group_by=${groupBy}`),
  auditLog: () => get<List<AuditEntry>>('/v1/organization/audit_logs'),

  balance: () => get<Balance>('/v1/billing/balance'),
  ledger: () => get<List<LedgerEntry>>('/v1/billing/ledger'),
  buyCredits: (credits: number) => post<Payment>('/v1/billing/topups', { credits }, { 'idempotency-key': crypto.randomUUID() }),
  payments: () => get<List<Payment>>('/v1/billing/payments'),
  autoTopUp: () => get<AutoTopUp>('/v1/billing/auto-topup'),
  setAutoTopUp: (b: { enabled: boolean; threshold?: number; credits?: number }) => request<AutoTopUp>('PUT', '/v1/billing/auto-topup', b),
  budgetAlerts: () => get<List<BudgetAlert>>('/v1/budget/alerts'),
  createBudgetAlert: (b: { threshold_type: string; threshold: number; channels: BudgetAlert['channels'] }) => post<BudgetAlert>('/v1/budget/alerts', b),
  deleteBudgetAlert: (id: string) => del(`/v1/budget/alerts/${id}`),
  fallbackChains: () => get<List<FallbackChain>>('/v1/fallback-chains'),
  providerKeys: () => get<List<ProviderKey> & { providers: string[]; fee_percent: number }>('/v1/provider-keys'),
  addProviderKey: (b: { provider: string; key: string }) => post<ProviderKey & { key: string }>('/v1/provider-keys', b),
  removeProviderKey: (provider: string) => del(`/v1/provider-keys/${encodeURIComponent(provider)}`),
  setFallbackChain: (model: string, chain: string[]) => request('PUT', `/v1/fallback-chains/${encodeURIComponent(model)}`, { chain }),
  deleteFallbackChain: (model: string) => del(`/v1/fallback-chains/${encodeURIComponent(model)}`),
  models: () => get<List<Model>>('/v1/models'),

  /** API files of one purpose, newest first. */
  files: (purpose: string) => get<List<ApiFile>>(`/v1/files?purpose=${encodeURIComponent(purpose)}&order=desc`),
  uploadFile: (file: File, purpose: string) => {
    const form = new FormData();
    form.set('purpose', purpose);
    form.set('file', file, file.name);
    return post<ApiFile>('/v1/files', form);
  },
  /** Where a file's bytes download from (a plain link: the session cookie rides along). */
  fileContentUrl: (id: string) => `/v1/files/${encodeURIComponent(id)}/content`,
  batches: (after?: string) => get<BatchPage>(`/v1/batches?limit=20${after ? `&after=${encodeURIComponent(after)}` : ''}`),
  batch: (id: string) => get<Batch>(`/v1/batches/${encodeURIComponent(id)}`),
  createBatch: (b: { input_file_id: string; endpoint: string; metadata?: Record<string, string> }) => post<Batch>('/v1/batches', { ...b, completion_window: '24h' }),
  cancelBatch: (id: string) => post<Batch>(`/v1/batches/${encodeURIComponent(id)}/cancel`),
};

/** The request log's query string, without the filters left empty (also the CSV link's). */
export function requestLogQuery(filters: Record<string, string>): string {
  return new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== '')).toString();
}
