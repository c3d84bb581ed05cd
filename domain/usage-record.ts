/**
 * A request's usage record as it crosses into the database: plpgsql (`gateway_record_usage`) reads it with
 * `jsonb_to_record` by these exact field names, so the shape is written once here, serialised only through
 * `usageRecordJson`, and test/domain/usage-record.test.ts fails when the two sides stop naming the same fields.
 */
export type RequestStatus = 'succeeded' | 'failed' | 'cancelled';

export interface UsageRecord {
  requestId: string;
  workspaceId: string;
  apiKeyId: string | null;
  endpoint: string;
  modelRequested: string;
  modelUsed: string | null;
  fallbackDepth: number;
  status: RequestStatus;
  inputTokens: number;
  outputTokens: number;
  /** Non-token units: images, seconds of audio, characters. */
  units?: Record<string, number>;
  clientRequestId?: string | null;
  errorCode?: string | null;
  latencyMs?: number | null;
  /** The member who made the request in the Playground (no key); API requests are their key's. */
  userId?: string | null;
  /** The batch a line of which this request was (domain/batches.ts), and that line's `custom_id`. */
  batchId?: string | null;
  batchCustomId?: string | null;
}

/** Every field, each once (a field added to or renamed in UsageRecord fails to compile until listed here). */
const FIELDS: { [K in keyof Required<UsageRecord>]: true } = {
  requestId: true, workspaceId: true, apiKeyId: true, endpoint: true, modelRequested: true, modelUsed: true,
  fallbackDepth: true, status: true, inputTokens: true, outputTokens: true, units: true, clientRequestId: true,
  errorCode: true, latencyMs: true, userId: true, batchId: true, batchCustomId: true,
};

export const USAGE_RECORD_FIELDS = Object.keys(FIELDS) as (keyof UsageRecord)[];

/** The JSON the database functions take: exactly the record's fields, nothing else. */
export function usageRecordJson(usage: UsageRecord): string {
  const picked: Record<string, unknown> = {};
  for (const field of USAGE_RECORD_FIELDS) if (usage[field] !== undefined) picked[field] = usage[field];
  return JSON.stringify(picked);
}

/** How a stream's ending is recorded: a finished stream succeeded; any other ending is a cut-off answer (`cancelled`, its ending as the code). */
export function streamUsageStatus(ending: string): { status: Exclude<RequestStatus, 'failed'>; errorCode: string | null } {
  return ending === 'completed' ? { status: 'succeeded', errorCode: null } : { status: 'cancelled', errorCode: ending };
}
