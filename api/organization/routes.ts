/**
 * The management API for the caller's workspace (OpenAI's Administration API shapes where there is a
 * counterpart), for signed-in members (the web app) and admin keys (automation):
 *   GET|POST        /v1/organization                       the workspace; rename
 *   GET             /v1/organization/users[/:id]           members;  POST /:id {role};  DELETE /:id
 *   POST            /v1/organization/transfer_ownership    {user_id}
 *   GET|POST        /v1/organization/invites               GET|DELETE /invites/:id
 *   GET             /v1/organization/api_key_presets
 *   GET|POST        /v1/organization/api_keys              GET|DELETE /api_keys/:id (DELETE revokes at once)
 *   GET|POST        /v1/organization/admin_api_keys        DELETE /admin_api_keys/:id
 *   GET             /v1/organization/usage/completions     daily buckets, group_by=model,api_key_id,user_id
 *   GET             /v1/organization/costs                 the same from the ledger's charges
 *   GET             /v1/organization/requests              the request log (filters, pages; format=csv for all its rows)
 *   GET             /v1/organization/requests/:id          what became of one of them (as GET /v1/requests/{id})
 *   GET             /v1/organization/audit_logs
 */
import Router from '@koa/router';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { assertPermission } from '../http/permissions';
import { InvalidRequestError, NotFoundError, PermissionDeniedError } from '../../core/errors';
import { can } from '../../domain/permissions';
import { normalizeEmail } from '../../domain/accounts';
import { accountMailer, mailText } from '../../domain/account-mail';
import {
  changeMemberRole, checkRole, createInvitation, getInvitation, listInvitations, listMembers, removeMember, renameWorkspace,
  revokeInvitation, transferOwnership, type Invitation, type Member,
} from '../../domain/members';
import { createApiKey, getWorkspace, KEY_QUOTA_LIMITS, revokeApiKey, type Role } from '../../domain/workspaces';
import { keyPresets, listKeys, quotasFromPreset } from '../../domain/key-management';
import { costReport, parseReportQuery, usageReport } from '../../domain/usage-reports';
import { parseRequestLogQuery, requestLogCsvHeader, requestLogCsvLines, requestLogPage, type RequestLogScope } from '../../domain/request-log';
import { compileSchema } from '../../endpoints/validate';
import { listObject } from '../../domain/pagination';
import { requestOutcome } from '../requests/routes';

/** The request log's CSV export stops there (a narrower time range or filter gets the rest). */
const CSV_MAX_ROWS = 100_000;

const seconds = (iso: string | null) => (iso ? Math.floor(new Date(iso).getTime() / 1000) : null);

const userView = (m: Member) => ({ object: 'organization.user', id: m.userId, name: m.name, email: m.email, role: m.role, added_at: seconds(m.addedAt) });
const inviteView = (i: Invitation) => ({
  object: 'organization.invite', id: i.id, email: i.email, role: i.role, status: i.status,
  invited_at: seconds(i.invitedAt), expires_at: seconds(i.expiresAt), accepted_at: seconds(i.acceptedAt),
});
const list = <T extends { id: string }>(data: T[]) => ({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });

interface KeyBody {
  name: string;
  preset?: string;
  role?: Role;
  rpm?: number | null;
  daily_tokens?: number | null;
  models?: string[] | null;
  cost_cap?: number | null;
}

const validateKeyBody = compileSchema<KeyBody>({
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    preset: { type: 'string', minLength: 1 },
    role: { enum: ['owner', 'admin', 'developer', 'billing', 'viewer'] },
    rpm: { type: ['integer', 'null'], minimum: 1, maximum: KEY_QUOTA_LIMITS.rpm },
    daily_tokens: { type: ['integer', 'null'], minimum: 1, maximum: KEY_QUOTA_LIMITS.dailyTokens },
    models: { type: ['array', 'null'], items: { type: 'string', minLength: 1 }, maxItems: 200 },
    cost_cap: { type: ['number', 'null'], exclusiveMinimum: 0, maximum: KEY_QUOTA_LIMITS.costCapCredits },
  },
  additionalProperties: false,
});

/** Whose requests the caller sees in the log: the workspace's with usage.read, else their own. */
function requestLogScope(ctx: GatewayContext): RequestLogScope {
  assertPermission(ctx, 'requests.read');
  const { auth } = ctx.state;
  return { workspaceId: auth.workspaceId, onlyUserId: can(auth.role, 'usage.read') ? null : auth.userId ?? '' };
}

export function organizationRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/organization' });
  const mailer = accountMailer({ smtpUrl: deps.config.smtpUrl ?? null, from: deps.config.smtpFrom }, deps.log);
  const body = (ctx: GatewayContext) => readJsonBody(ctx, 64 * 1024);
  const actorOf = (ctx: GatewayContext) => (ctx.state.auth.via === 'session' ? `user:${ctx.state.auth.userId}` : `key:${ctx.state.auth.keyId}`);

  router.get('/', async (ctx) => {
    const ws = await getWorkspace(deps.db, ctx.state.auth.workspaceId);
    ctx.body = { object: 'organization', id: ws.id, name: ws.name, plan: ws.planId, role: ctx.state.auth.role };
  });

  router.post('/', async (ctx) => {
    assertPermission(ctx, 'workspace.manage');
    const ws = await renameWorkspace(deps.db, { workspaceId: ctx.state.auth.workspaceId, name: (await body(ctx)).name, actor: actorOf(ctx) });
    ctx.body = { object: 'organization', id: ws.id, name: ws.name, plan: ws.planId, role: ctx.state.auth.role };
  });

  // Members
  router.get('/users', async (ctx) => {
    assertPermission(ctx, 'members.read');
    ctx.body = list((await listMembers(deps.db, ctx.state.auth.workspaceId)).map(userView));
  });

  const memberOr404 = async (ctx: GatewayContext) => {
    const member = (await listMembers(deps.db, ctx.state.auth.workspaceId)).find((m) => m.userId === ctx.params.userId);
    if (!member) throw new NotFoundError(`No user '${ctx.params.userId}' in this workspace`, { code: 'user_not_found' });
    return member;
  };

  router.get('/users/:userId', async (ctx) => {
    assertPermission(ctx, 'members.read');
    ctx.body = userView(await memberOr404(ctx));
  });

  router.post('/users/:userId', async (ctx) => {
    assertPermission(ctx, 'members.manage');
    const role = checkRole((await body(ctx)).role);
    const member = await changeMemberRole(deps.db, { workspaceId: ctx.state.auth.workspaceId, userId: ctx.params.userId, role, actorRole: ctx.state.auth.role, actor: actorOf(ctx) });
    ctx.body = userView(member);
  });

  router.delete('/users/:userId', async (ctx) => {
    const self = ctx.params.userId === ctx.state.auth.userId && ctx.state.auth.via === 'session';
    if (!self) assertPermission(ctx, 'members.manage');
    await removeMember(deps.db, { workspaceId: ctx.state.auth.workspaceId, userId: ctx.params.userId, actorRole: ctx.state.auth.role, actor: actorOf(ctx), self });
    ctx.body = { object: 'organization.user.deleted', id: ctx.params.userId, deleted: true };
  });

  router.post('/transfer_ownership', async (ctx) => {
    const to = (await body(ctx)).user_id;
    if (typeof to !== 'string') throw new InvalidRequestError('user_id is required', { param: 'user_id' });
    if (!ctx.state.auth.userId || ctx.state.auth.role !== 'owner') throw new PermissionDeniedError('Only the owner may transfer ownership.', { code: 'insufficient_role' });
    await transferOwnership(deps.db, { workspaceId: ctx.state.auth.workspaceId, fromUserId: ctx.state.auth.userId, toUserId: to, actor: actorOf(ctx) });
    ctx.body = list((await listMembers(deps.db, ctx.state.auth.workspaceId)).map(userView));
  });

  // Invitations
  router.get('/invites', async (ctx) => {
    assertPermission(ctx, 'members.manage');
    ctx.body = list((await listInvitations(deps.db, ctx.state.auth.workspaceId)).map(inviteView));
  });

  router.post('/invites', async (ctx) => {
    assertPermission(ctx, 'members.manage');
    const b = await body(ctx);
    const email = normalizeEmail(b.email);
    const role = checkRole(b.role);
    const { workspaceId } = ctx.state.auth;
    const { invitation, token } = await createInvitation(deps.db, { workspaceId, email, role, actorRole: ctx.state.auth.role, invitedBy: ctx.state.auth.userId, actor: actorOf(ctx) });
    const workspace = await getWorkspace(deps.db, workspaceId);
    const inviter = ctx.state.auth.userId ? (await deps.db('users').where({ id: ctx.state.auth.userId }).first('name'))?.name ?? 'A teammate' : 'An administrator';
    const mail = mailText.invite(`${deps.publicUrl()}/invite?token=${token}`, workspace.name, role, inviter);
    await mailer.send(email, mail.subject, mail.text);
    ctx.status = 201;
    ctx.body = inviteView(invitation);
  });

  router.get('/invites/:inviteId', async (ctx) => {
    assertPermission(ctx, 'members.manage');
    ctx.body = inviteView(await getInvitation(deps.db, ctx.state.auth.workspaceId, ctx.params.inviteId));
  });

  router.delete('/invites/:inviteId', async (ctx) => {
    assertPermission(ctx, 'members.manage');
    await revokeInvitation(deps.db, { workspaceId: ctx.state.auth.workspaceId, id: ctx.params.inviteId, actor: actorOf(ctx) });
    ctx.body = { object: 'organization.invite.deleted', id: ctx.params.inviteId, deleted: true };
  });

  // API keys
  router.get('/api_key_presets', async (ctx) => {
    assertPermission(ctx, 'api_keys.read');
    ctx.body = { object: 'list', data: await keyPresets(deps.db) };
  });

  /** Developers see and revoke their own keys; owners and admins everyone's. */
  const keyScope = (ctx: GatewayContext) => (can(ctx.state.auth.role, 'api_keys.manage_all') ? undefined : ctx.state.auth.userId ?? '-');

  router.get('/api_keys', async (ctx) => {
    assertPermission(ctx, 'api_keys.read');
    ctx.body = list(await listKeys(deps.db, { workspaceId: ctx.state.auth.workspaceId, kind: 'project', userId: keyScope(ctx) }));
  });

  router.post('/api_keys', async (ctx) => {
    assertPermission(ctx, 'api_keys.create');
    const b = validateKeyBody(await body(ctx));
    const preset = b.preset ?? 'custom';
    const quotas = await quotasFromPreset(deps.db, preset, { rpm: b.rpm, dailyTokens: b.daily_tokens, models: b.models, costCap: b.cost_cap });
    const created = await createApiKey(deps.db, {
      workspaceId: ctx.state.auth.workspaceId, name: b.name, role: b.role ?? ctx.state.auth.role, quotas, preset,
      createdByUserId: ctx.state.auth.userId, actor: actorOf(ctx),
    });
    const [listing] = await listKeys(deps.db, { workspaceId: ctx.state.auth.workspaceId, kind: 'project', keyId: created.id });
    ctx.status = 201;
    ctx.body = { ...listing, value: created.key };
  });

  const keyOr404 = async (ctx: GatewayContext, kind: 'project' | 'admin') => {
    const [key] = await listKeys(deps.db, { workspaceId: ctx.state.auth.workspaceId, kind, keyId: ctx.params.keyId, userId: kind === 'project' ? keyScope(ctx) : undefined });
    if (!key) throw new NotFoundError(`No API key '${ctx.params.keyId}'`, { code: 'api_key_not_found' });
    return key;
  };

  router.get('/api_keys/:keyId', async (ctx) => {
    assertPermission(ctx, 'api_keys.read');
    ctx.body = await keyOr404(ctx, 'project');
  });

  router.delete('/api_keys/:keyId', async (ctx) => {
    assertPermission(ctx, 'api_keys.read');
    await keyOr404(ctx, 'project');
    await revokeApiKey(deps.db, { keyId: ctx.params.keyId, workspaceId: ctx.state.auth.workspaceId, actor: actorOf(ctx) });
    ctx.body = { object: 'organization.api_key.deleted', id: ctx.params.keyId, deleted: true };
  });

  // Admin keys (automation of this API)
  router.get('/admin_api_keys', async (ctx) => {
    assertPermission(ctx, 'admin_keys.manage');
    ctx.body = list(await listKeys(deps.db, { workspaceId: ctx.state.auth.workspaceId, kind: 'admin' }));
  });

  router.post('/admin_api_keys', async (ctx) => {
    assertPermission(ctx, 'admin_keys.manage');
    const name = (await body(ctx)).name;
    if (typeof name !== 'string' || !name.trim() || name.length > 100) throw new InvalidRequestError('name is required (up to 100 characters)', { param: 'name' });
    const created = await createApiKey(deps.db, {
      workspaceId: ctx.state.auth.workspaceId, name: name.trim(), role: 'admin', kind: 'admin', createdByUserId: ctx.state.auth.userId, actor: actorOf(ctx),
    });
    const [listing] = await listKeys(deps.db, { workspaceId: ctx.state.auth.workspaceId, kind: 'admin', keyId: created.id });
    ctx.status = 201;
    ctx.body = { ...listing, object: 'organization.admin_api_key', value: created.key };
  });

  router.delete('/admin_api_keys/:keyId', async (ctx) => {
    assertPermission(ctx, 'admin_keys.manage');
    await keyOr404(ctx, 'admin');
    await revokeApiKey(deps.db, { keyId: ctx.params.keyId, workspaceId: ctx.state.auth.workspaceId, actor: actorOf(ctx) });
    ctx.body = { object: 'organization.admin_api_key.deleted', id: ctx.params.keyId, deleted: true };
  });

  // Usage and costs
  router.get('/usage/completions', async (ctx) => {
    assertPermission(ctx, 'usage.read');
    ctx.body = await usageReport(deps.db, ctx.state.auth.workspaceId, parseReportQuery(ctx.query));
  });

  router.get('/costs', async (ctx) => {
    assertPermission(ctx, 'usage.read');
    ctx.body = await costReport(deps.db, ctx.state.auth.workspaceId, parseReportQuery(ctx.query));
  });

  // The request log: the workspace's for those who read its usage, a member's own for those who have keys.
  router.get('/requests', async (ctx) => {
    const scope = requestLogScope(ctx);
    const query = parseRequestLogQuery(ctx.query);
    if (ctx.query.format === 'csv') {
      // Every row the filters match, newest first, a page at a time (at most CSV_MAX_ROWS).
      let csv = requestLogCsvHeader();
      let page = { ...query, limit: 1000 };
      for (let rows = 0; rows < CSV_MAX_ROWS;) {
        const { data, hasMore } = await requestLogPage(deps.db, scope, page);
        csv += requestLogCsvLines(data);
        rows += data.length;
        if (!hasMore) break;
        page = { ...page, after: data[data.length - 1].id };
      }
      ctx.type = 'text/csv; charset=utf-8';
      ctx.set('content-disposition', 'attachment; filename="requests.csv"');
      ctx.body = csv;
      return;
    }
    if (ctx.query.format !== undefined && ctx.query.format !== 'json') throw new InvalidRequestError("'format' is json or csv.", { param: 'format', code: 'invalid_value' });
    const { data, hasMore } = await requestLogPage(deps.db, scope, query);
    ctx.body = listObject(data, hasMore);
  });

  // One row of the log, opened: the same outcome as GET /v1/requests/{id}, for a request the reader may see in the log.
  router.get('/requests/:id', async (ctx) => {
    const scope = requestLogScope(ctx);
    const { data } = await requestLogPage(deps.db, scope, parseRequestLogQuery({ request_id: ctx.params.id, limit: '1' }));
    if (data.length === 0) throw new NotFoundError(`No request '${ctx.params.id}' in this workspace's log.`, { code: 'request_not_found', param: 'id' });
    ctx.body = await requestOutcome(deps, scope.workspaceId, data[0].id);
  });

  router.get('/audit_logs', async (ctx) => {
    assertPermission(ctx, 'workspace.manage');
    const rows = await deps.db('audit_log').where({ workspace_id: ctx.state.auth.workspaceId }).orderBy('id', 'desc').limit(100);
    ctx.body = list(rows.map((r) => ({
      object: 'organization.audit_log', id: `audit_${r.id}`, type: r.action, effective_at: seconds(new Date(r.created_at).toISOString()),
      actor: r.actor, subject: { type: r.subject_type, id: r.subject_id }, data: r.data,
    })));
  });

  return router;
}
