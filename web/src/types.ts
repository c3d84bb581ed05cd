/** Shapes of the gateway's JSON responses, as the app reads them. */
export type Role = 'owner' | 'admin' | 'developer' | 'billing' | 'viewer';
export const ROLES: Role[] = ['owner', 'admin', 'developer', 'billing', 'viewer'];

export interface List<T> {
  object: 'list';
  data: T[];
}

export interface User {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
}

export interface Me {
  /** null: signed out */
  user: { id: string; email: string; name: string } | null;
  workspaces: Array<{ id: string; name: string; role: Role; plan: string | null }>;
  workspace: { id: string; name: string; role: Role; plan: string | null; permissions: string[] } | null;
}

export interface Invite {
  id: string;
  email: string;
  role: Role;
  status: 'pending' | 'accepted' | 'expired' | 'revoked';
  invited_at: number;
  expires_at: number;
}

export interface KeyPreset {
  id: string;
  name: string;
  rpm: number | null;
  daily_tokens: number | null;
  models: string[] | null;
  cost_cap: number | null;
}

export interface ApiKey {
  id: string;
  name: string;
  redacted_value: string;
  role: Role;
  preset: string | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  owner: { type: 'user' | 'operator'; user: { id: string; email: string; name: string } | null };
  quotas: { rpm: number | null; daily_tokens: number | null; models: string[] | null; cost_cap: number | null };
  usage: { requests: number; credits: number };
}

export interface CreatedKey extends ApiKey {
  value: string;
}

export interface Balance {
  cycle: string;
  balance: number;
  plan_credits: number;
  topup_credits: number;
  spent_this_cycle: number;
  plan: { id: string; name: string; monthly_credits: number; rollover: boolean; rollover_cap: number | null } | null;
  debt: number;
  topups: TopupTerms;
}

/** How credits are bought here: Stripe Checkout within bounds, or (no payment processor) only by the operators. */
export type TopupTerms =
  | { enabled: true; min_credits: number; max_credits: number; price_per_credit: number; currency: string; auto_topup_period_seconds: number }
  | { enabled: false; added_by: 'operators' };

export interface Payment {
  id: string;
  kind: 'checkout' | 'auto';
  status: 'pending' | 'succeeded' | 'failed' | 'refunded' | 'partially_refunded' | 'disputed' | 'dispute_won' | 'dispute_lost';
  credits: number;
  amount: number;
  currency: string;
  amount_refunded: number;
  credits_applied: number;
  receipt_url: string | null;
  checkout_url: string | null;
  failure_message: string | null;
  created_at: number;
  paid_at: number | null;
}

export interface AutoTopUp {
  enabled: boolean;
  threshold: number | null;
  credits: number | null;
  payment_method: string | null;
  last_failure: { payment_id: string; message: string; at: number } | null;
}

/** One entry of the ledger: a single movement, or a request's hold with what ended it (`hold`, `movements`). */
export interface LedgerEntry {
  id: number;
  /** A hold's outcome (`settle`, `refund`, `release`; `reserve` while open), or the movement's kind. */
  kind: string;
  /** What the entry did to the balance. */
  credits: number;
  source: 'plan' | 'topup' | 'debt' | null;
  model: string | null;
  api_key_id: string | null;
  api_key: { id: string; name: string | null } | null;
  /** A Playground request: the member who made it. */
  member: { id: string; name: string | null; email: string | null } | null;
  request_id: string | null;
  hold: { held: number; released: number; refunded: number; charged: number; open: boolean } | null;
  movements: Array<{ id: number; kind: string; credits: number; source: 'plan' | 'topup' | 'debt' | null; created_at: number }>;
  created_at: number;
}

interface Bucket<R> {
  start_time: number;
  end_time: number;
  results: R[];
}
export interface UsageResult {
  input_tokens: number;
  output_tokens: number;
  num_model_requests: number;
  credits: number;
  model: string | null;
  api_key_id: string | null;
  user_id: string | null;
}
/** Grouped by key or member, a result names them. */
export interface ReportNames {
  api_key_name?: string | null;
  user_name?: string | null;
  user_email?: string | null;
}
export interface UsagePage {
  data: Array<Bucket<UsageResult & ReportNames>>;
}
export interface CostPage {
  /** `source` (grouped by member): spent through the member's keys (`api`) or in the Playground. */
  data: Array<Bucket<{ amount: { value: number; currency: string }; model: string | null; api_key_id: string | null; user_id: string | null; source?: 'api' | 'playground' } & ReportNames>>;
}

export interface BudgetAlert {
  id: string;
  threshold_type: 'credits' | 'percent';
  threshold: number;
  enabled: boolean;
  channels: { email?: { to: string[] }; webhook?: { url: string } };
}

export interface FallbackChain {
  model: string;
  chain: string[];
}

export interface Model {
  id: string;
  name: string;
  provider: string;
  modality: string;
  /** Whether this workspace (or the calling key) can use it; else the code its request would be refused with, and why. */
  available: boolean;
  unavailable_code?: 'model_not_allowed' | 'provider_not_configured';
  unavailable_reason?: string;
  /** Whether a provider key of the workspace's own would make it usable. */
  needs_provider_key?: boolean;
  pricing: Record<string, unknown>;
  allowedParams: Record<string, unknown>;
  context_window: number | null;
}

export interface AuditEntry {
  id: string;
  type: string;
  effective_at: number;
  actor: string;
  subject: { type: string; id: string };
}

/** One row of the request log (GET /v1/organization/requests). */
export interface RequestLogEntry {
  id: string;
  client_request_id: string | null;
  created_at: number;
  endpoint: string;
  model_requested: string;
  model_used: string | null;
  fallback_depth: number;
  source: 'api' | 'playground';
  api_key: { id: string; name: string } | null;
  member: { id: string; name: string; email: string } | null;
  status: string;
  error_code: string | null;
  input_tokens: number;
  output_tokens: number;
  credits: number;
  latency_ms: number | null;
  /** Whose provider key served: the workspace's own (BYOK, charged the fee) or the platform's. */
  key_source?: 'platform' | 'workspace';
}

export interface RequestLogPage {
  data: RequestLogEntry[];
  has_more: boolean;
  last_id: string;
}

/** What became of one request (GET /v1/requests/{id}). */
export interface RequestOutcome {
  id: string;
  status: string;
  endpoint: string | null;
  model: string | null;
  model_used: string | null;
  fallback_hops: Array<{ model: string; outcome: string }> | null;
  credits_used: number | null;
  error: { message: string; type: string; code: string | null } | null;
}

/** A workspace's own provider key (BYOK): only its last four characters are ever shown after it was added. */
export interface ProviderKey {
  object: 'provider_key'; id: string; provider: string; last_four: string; created_by: string | null; created_at: number;
}

/** An API file (`/v1/files`), as batches take and give them. */
export interface ApiFile {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: string;
}

/** The endpoints a batch line may call (OpenAI's Batch API). */
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/completions', '/v1/moderations'] as const;
export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';
/** Statuses after which a batch changes no more. */
export const BATCH_DONE: readonly BatchStatus[] = ['failed', 'completed', 'expired', 'cancelled'];

/** OpenAI's batch object, plus the gateway's `credits_used`: what its lines were charged so far. */
export interface Batch {
  id: string;
  object: 'batch';
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  errors: { object: 'list'; data: Array<{ code: string; message: string; param: string | null; line: number | null }> } | null;
  created_at: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  expires_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  credits_used?: number | null;
}

export interface BatchPage extends List<Batch> {
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}
