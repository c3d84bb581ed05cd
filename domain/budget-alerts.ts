/**
 * Budget alerts of a workspace: a threshold (credits spent in the billing cycle, or a percentage of the
 * plan's monthly credits) and the channels it notifies (e-mail, chat webhook). The CLI and the admin
 * routes share these operations. A webhook URL is held to the delivery's rules when the alert is created
 * (public unicast http(s) only, its host name resolved, unless private webhooks are allowed), so a URL
 * that could never be delivered to is refused at once instead of being retried.
 */
import type { Knex } from 'knex';
import { audit } from './audit';
import { InvalidRequestError, NotFoundError } from '../core/errors';
import { newId } from '../core/ids';
import { creditsToMicro, microToCredits } from '../core/money';
import { hasControlCharacters } from '../core/input-limits';
import { checkWebhookUrl, type WebhookOptions } from '../infra/notify/chat-webhook';
import { SafeFetchError } from '../infra/safe-fetch';
import { getWorkspace } from './workspaces';

export type ThresholdType = 'credits' | 'percent';
export type ChannelName = 'email' | 'webhook';
export const CHANNEL_NAMES: readonly ChannelName[] = ['email', 'webhook'];

export interface AlertChannels {
  email?: { to: string[] };
  /** A Slack-compatible incoming webhook: POST `{text, blocks}`. */
  webhook?: { url: string };
}

export interface BudgetAlert {
  id: string;
  workspaceId: string;
  thresholdType: ThresholdType;
  /** Micro-credits for `credits`, whole percent for `percent`. */
  thresholdValue: number;
  channels: AlertChannels;
  enabled: boolean;
  createdAt: Date;
}

/** Most alerts one workspace may keep: each is evaluated after every settlement. */
export const MAX_ALERTS_PER_WORKSPACE = 50;
export const MAX_PERCENT = 1000;
const EMAIL_RE = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

export function toBudgetAlert(row: Record<string, any>): BudgetAlert {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    thresholdType: row.threshold_type,
    thresholdValue: Number(row.threshold_value),
    channels: typeof row.channels === 'string' ? JSON.parse(row.channels) : row.channels,
    enabled: row.enabled,
    createdAt: new Date(row.created_at),
  };
}

/** One (cycle, channel) delivery of an alert: sent, or given up after its retries ran out of time. */
export interface AlertDelivery {
  cycle: string;
  channel: ChannelName;
  status: 'sending' | 'sent' | 'failed';
  /** When it was sent, or given up. */
  at: Date;
  error: string | null;
}

/** The deliveries of these alerts, newest first per alert. */
export async function alertDeliveries(db: Knex, alertIds: string[]): Promise<Map<string, AlertDelivery[]>> {
  const rows = alertIds.length === 0 ? [] : await db('budget_alert_deliveries').whereIn('alert_id', alertIds)
    .orderBy([{ column: 'alert_id' }, { column: 'cycle', order: 'desc' }, { column: 'channel' }])
    .select('alert_id', 'cycle', 'channel', 'status', 'delivered_at', 'error');
  const byAlert = new Map<string, AlertDelivery[]>(alertIds.map((id) => [id, []]));
  for (const row of rows) {
    byAlert.get(row.alert_id)?.push({ cycle: row.cycle, channel: row.channel, status: row.status, at: new Date(row.delivered_at), error: row.error });
  }
  return byAlert;
}

/**
 * The public form (API and CLI): thresholds in credits or percent, never micro-credits; with
 * `deliveries`, what each cycle's deliveries came to.
 */
export function budgetAlertView(alert: BudgetAlert, deliveries?: AlertDelivery[]) {
  return {
    id: alert.id,
    object: 'budget_alert' as const,
    workspace_id: alert.workspaceId,
    threshold_type: alert.thresholdType,
    threshold: alert.thresholdType === 'credits' ? microToCredits(alert.thresholdValue) : alert.thresholdValue,
    channels: alert.channels,
    enabled: alert.enabled,
    created_at: Math.floor(alert.createdAt.getTime() / 1000),
    ...(deliveries ? { deliveries: deliveries.map(deliveryView) } : {}),
  };
}

function deliveryView(delivery: AlertDelivery) {
  return { cycle: delivery.cycle, channel: delivery.channel, status: delivery.status, at: Math.floor(delivery.at.getTime() / 1000), error: delivery.error };
}

async function checkChannels(channels: AlertChannels, webhooks: WebhookOptions): Promise<AlertChannels> {
  const out: AlertChannels = {};
  if (channels.email) {
    const to = [...new Set(channels.email.to.map((a) => a.trim()))];
    if (to.length === 0 || to.length > 20) throw new InvalidRequestError('An e-mail channel sends to 1 to 20 addresses.', { param: 'channels.email.to' });
    to.forEach((address, i) => {
      if (!EMAIL_RE.test(address) || address.length > 254 || hasControlCharacters(address)) {
        throw new InvalidRequestError(`'${address}' is not an e-mail address.`, { param: `channels.email.to[${i}]`, code: 'invalid_email' });
      }
    });
    out.email = { to };
  }
  if (channels.webhook) out.webhook = { url: await deliverableWebhookUrl(channels.webhook.url, webhooks) };
  if (!out.email && !out.webhook) throw new InvalidRequestError('An alert needs at least one channel: email or webhook.', { param: 'channels' });
  return out;
}

async function deliverableWebhookUrl(url: string, webhooks: WebhookOptions): Promise<string> {
  try {
    return await checkWebhookUrl(url, webhooks);
  } catch (err) {
    if (!(err instanceof SafeFetchError)) throw err;
    const code = err.reason === 'forbidden_address' ? 'webhook_address_not_allowed' : err.reason === 'fetch_failed' ? 'webhook_host_unresolvable' : 'invalid_url';
    throw new InvalidRequestError(`The webhook URL cannot be delivered to: ${err.message}`, { param: 'channels.webhook.url', code });
  }
}

/** Turns a threshold as people write it (credits, possibly fractional; whole percent) into its stored form. */
export function thresholdValueOf(type: ThresholdType, threshold: number): number {
  if (type === 'percent') {
    if (!Number.isInteger(threshold) || threshold < 1 || threshold > MAX_PERCENT) {
      throw new InvalidRequestError(`A percent threshold is a whole number from 1 to ${MAX_PERCENT}.`, { param: 'threshold' });
    }
    return threshold;
  }
  let micro: number;
  try {
    micro = creditsToMicro(threshold);
  } catch {
    micro = 0;
  }
  if (!(micro > 0)) throw new InvalidRequestError('A credits threshold is a positive number of credits with at most 6 decimals (at least 0.000001).', { param: 'threshold' });
  return micro;
}

export async function createBudgetAlert(db: Knex, opts: {
  workspaceId: string; thresholdType: ThresholdType; threshold: number; channels: AlertChannels; actor: string;
  /** The deployment's webhook policy (ALLOW_PRIVATE_WEBHOOKS), the same the deliveries follow. */
  webhooks: WebhookOptions;
}): Promise<BudgetAlert> {
  await getWorkspace(db, opts.workspaceId);
  if (opts.thresholdType !== 'credits' && opts.thresholdType !== 'percent') {
    throw new InvalidRequestError("threshold_type must be 'credits' or 'percent'.", { param: 'threshold_type' });
  }
  const thresholdValue = thresholdValueOf(opts.thresholdType, opts.threshold);
  const channels = await checkChannels(opts.channels, opts.webhooks);
  const id = newId('alert');
  const row = await db.transaction(async (trx) => {
    // Serialises creations in one workspace so the limit holds.
    await trx.raw('select id from workspaces where id = ? for update', [opts.workspaceId]);
    const [{ count }] = await trx('budget_alerts').where({ workspace_id: opts.workspaceId }).count<{ count: string }[]>({ count: '*' });
    if (Number(count) >= MAX_ALERTS_PER_WORKSPACE) {
      throw new InvalidRequestError(`A workspace keeps at most ${MAX_ALERTS_PER_WORKSPACE} budget alerts; delete one first.`, { code: 'too_many_alerts' });
    }
    const [inserted] = await trx('budget_alerts').insert({
      id, workspace_id: opts.workspaceId, threshold_type: opts.thresholdType, threshold_value: thresholdValue, channels: JSON.stringify(channels), enabled: true,
    }, '*');
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'budget_alert.create', subjectType: 'budget_alert', subjectId: id, data: { thresholdType: opts.thresholdType, thresholdValue, channels } });
    return inserted;
  });
  alertPresence.invalidate(opts.workspaceId);
  return toBudgetAlert(row);
}

export async function listBudgetAlerts(db: Knex, workspaceId: string): Promise<BudgetAlert[]> {
  const rows = await db('budget_alerts').where({ workspace_id: workspaceId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(toBudgetAlert);
}

/** The workspace's alerts in their public form, each with its deliveries. */
export async function budgetAlertViews(db: Knex, workspaceId: string): Promise<Array<ReturnType<typeof budgetAlertView>>> {
  const alerts = await listBudgetAlerts(db, workspaceId);
  const deliveries = await alertDeliveries(db, alerts.map((a) => a.id));
  return alerts.map((alert) => budgetAlertView(alert, deliveries.get(alert.id)));
}

/** One alert of the workspace; another workspace's alert is "not found", like a missing one. */
export async function getBudgetAlert(db: Knex, workspaceId: string, alertId: string): Promise<BudgetAlert> {
  const row = await db('budget_alerts').where({ id: alertId, workspace_id: workspaceId }).first();
  if (!row) throw alertNotFound(alertId);
  return toBudgetAlert(row);
}

function alertNotFound(alertId: string): NotFoundError {
  return new NotFoundError(`No budget alert '${alertId}'.`, { code: 'budget_alert_not_found', param: 'alert_id' });
}

/** Deletes an alert of the workspace; another workspace's alert is "not found", like a missing one. */
export async function deleteBudgetAlert(db: Knex, opts: { workspaceId: string; alertId: string; actor: string }): Promise<{ id: string; deleted: true }> {
  await db.transaction(async (trx) => {
    const removed = await trx('budget_alerts').where({ id: opts.alertId, workspace_id: opts.workspaceId }).delete();
    if (removed === 0) throw alertNotFound(opts.alertId);
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'budget_alert.delete', subjectType: 'budget_alert', subjectId: opts.alertId });
  });
  alertPresence.invalidate(opts.workspaceId);
  return { id: opts.alertId, deleted: true };
}

/**
 * Whether a workspace has enabled alerts, cached per process for a short time: request workflows ask
 * after every settlement, and a workspace without alerts must cost nothing. Changes made in this process
 * invalidate at once; other processes see them within the TTL.
 */
export class AlertPresenceCache {
  private readonly entries = new Map<string, { has: boolean; at: number }>();
  constructor(private readonly ttlMs = 15_000, private readonly now: () => number = Date.now, private readonly maxEntries = 100_000) {}

  async has(db: Knex, workspaceId: string): Promise<boolean> {
    const hit = this.entries.get(workspaceId);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.has;
    const row = await db('budget_alerts').where({ workspace_id: workspaceId, enabled: true }).first('id');
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(workspaceId, { has: Boolean(row), at: this.now() });
    return Boolean(row);
  }

  invalidate(workspaceId: string): void {
    this.entries.delete(workspaceId);
  }
}

export const alertPresence = new AlertPresenceCache();
