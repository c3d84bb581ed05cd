/**
 * Workspaces as people see them: the members and their roles, invitations by e-mail, and ownership. A
 * workspace always keeps an owner: the last owner can neither leave, be removed nor be demoted; ownership
 * moves only by transfer. Every change is written to the audit log in the same transaction.
 */
import type { Knex } from 'knex';
import { ConflictError, InvalidRequestError, NotFoundError, PermissionDeniedError } from '../core/errors';
import { newId } from '../core/ids';
import { audit } from './audit';
import { cycleOf } from './billing-cycle';
import { mayAssign } from './permissions';
import { grantCycleForWorkspace } from './plan-grants';
import { getPlan } from './plans';
import { hashSecretToken, looksLikeSecretToken, newSecretToken } from './secret-tokens';
import { createWorkspace, getWorkspace, ROLES, type Role, type Workspace } from './workspaces';

export const INVITE_TTL_MS = 7 * 24 * 3600_000;

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  addedAt: string;
}

export function checkRole(value: unknown, param = 'role'): Role {
  if (typeof value !== 'string' || !(ROLES as readonly string[]).includes(value)) {
    throw new InvalidRequestError(`role must be one of ${ROLES.join(', ')}`, { param });
  }
  return value as Role;
}

/**
 * A new workspace whose first member (its owner) is `userId`, on the free plan. Made at sign-up
 * (`activated: false`), it gets this cycle's credits and may spend only once its owner confirmed their
 * address (`activateWorkspacesOf`); made by someone already confirmed, at once. The free plan's credits go
 * to one workspace per person: a person who made a workspace before gets the next one without a plan
 * (`personalPlanFor`), unless a plan is named (an operator's choice).
 */
export async function createWorkspaceWithOwner(db: Knex, opts: { name: string; userId: string; planId?: string | null; activated?: boolean }): Promise<Workspace> {
  const actor = `user:${opts.userId}`;
  const activated = opts.activated ?? true;
  return db.transaction(async (trx) => {
    // One at a time per person, so two workspaces made at once cannot both be their first.
    await trx.raw('select id from users where id = ? for update', [opts.userId]);
    const planId = opts.planId === undefined ? await personalPlanFor(trx, opts.userId) : opts.planId;
    const workspace = await createWorkspace(trx, { name: opts.name, planId, actor, activated });
    await addMember(trx, { workspaceId: workspace.id, userId: opts.userId, role: 'owner', actor });
    if (planId && activated) await grantCycleForWorkspace(trx, { workspaceId: workspace.id, plan: await getPlan(trx, planId), cycle: cycleOf(new Date()) });
    return workspace;
  });
}

/**
 * The plan of a workspace a person makes for themselves: the free plan for their first, none after it (the
 * free credits go to one workspace per person, wherever its ownership went since).
 */
export async function personalPlanFor(db: Knex | Knex.Transaction, userId: string): Promise<string | null> {
  const before = await db('audit_log').where({ action: 'workspace.create', actor: `user:${userId}` }).first('id');
  return before ? null : 'free';
}

/**
 * The person `userId` confirmed their e-mail address: the workspaces they own that waited for it become
 * active and get their plan's credits for this cycle, in the caller's transaction. Returns their ids.
 */
export async function activateWorkspacesOf(trx: Knex.Transaction, userId: string): Promise<string[]> {
  const activated: Array<{ id: string; plan_id: string | null }> = await trx('workspaces')
    .whereNull('activated_at')
    .whereIn('id', trx('members').where({ user_id: userId, role: 'owner' }).select('workspace_id'))
    .update({ activated_at: trx.fn.now() }, ['id', 'plan_id']);
  for (const workspace of activated) {
    await audit(trx, { workspaceId: workspace.id, actor: `user:${userId}`, action: 'workspace.activate', subjectType: 'workspace', subjectId: workspace.id });
    if (workspace.plan_id) await grantCycleForWorkspace(trx, { workspaceId: workspace.id, plan: await getPlan(trx, workspace.plan_id), cycle: cycleOf(new Date()) });
  }
  return activated.map((w) => w.id);
}

/** Adds a person with `role` (or sets their role if they are a member): for operators (the CLI, dev start). */
export async function addMember(db: Knex, opts: { workspaceId: string; userId: string; role: Role; actor: string }): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('members').insert({ workspace_id: opts.workspaceId, user_id: opts.userId, role: opts.role }).onConflict(['workspace_id', 'user_id']).merge(['role']);
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'member.add', subjectType: 'user', subjectId: opts.userId, data: { role: opts.role } });
  });
}

export async function memberRole(db: Knex | Knex.Transaction, workspaceId: string, userId: string): Promise<Role | null> {
  const row = await db('members').where({ workspace_id: workspaceId, user_id: userId }).first('role');
  return row?.role ?? null;
}

export async function workspacesOfUser(db: Knex, userId: string): Promise<Array<Workspace & { role: Role }>> {
  const rows = await db('members as m').join('workspaces as w', 'w.id', 'm.workspace_id')
    .where('m.user_id', userId).orderBy('m.created_at').select('w.id', 'w.name', 'w.plan_id', 'm.role');
  return rows.map((r) => ({ id: r.id, name: r.name, planId: r.plan_id, role: r.role }));
}

export async function renameWorkspace(db: Knex, opts: { workspaceId: string; name: unknown; actor: string }): Promise<Workspace> {
  const name = typeof opts.name === 'string' ? opts.name.trim() : '';
  if (!name || name.length > 200) throw new InvalidRequestError('workspace name must be 1 to 200 characters', { param: 'name' });
  const before = await getWorkspace(db, opts.workspaceId);
  await db.transaction(async (trx) => {
    await trx('workspaces').where({ id: opts.workspaceId }).update({ name, updated_at: trx.fn.now() });
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'workspace.rename', subjectType: 'workspace', subjectId: opts.workspaceId, data: { from: before.name, to: name } });
  });
  return { ...before, name };
}

export async function listMembers(db: Knex, workspaceId: string): Promise<Member[]> {
  const rows = await db('members as m').join('users as u', 'u.id', 'm.user_id')
    .where('m.workspace_id', workspaceId).orderBy('m.created_at').select('u.id', 'u.email', 'u.name', 'm.role', 'm.created_at');
  return rows.map((r) => ({ userId: r.id, email: r.email, name: r.name, role: r.role, addedAt: new Date(r.created_at).toISOString() }));
}

async function lockedMember(trx: Knex.Transaction, workspaceId: string, userId: string): Promise<{ role: Role }> {
  // Locks the workspace's member rows, so two concurrent changes cannot both remove "the other" owner.
  await trx.raw('select 1 from members where workspace_id = ? for update', [workspaceId]);
  const row = await trx('members').where({ workspace_id: workspaceId, user_id: userId }).first('role');
  if (!row) throw new NotFoundError(`No member '${userId}' in this workspace`, { code: 'user_not_found' });
  return row;
}

async function ownerCount(trx: Knex.Transaction, workspaceId: string): Promise<number> {
  const [{ n }] = await trx('members').where({ workspace_id: workspaceId, role: 'owner' }).count({ n: '*' });
  return Number(n);
}

function lastOwner(): ConflictError {
  return new ConflictError('A workspace always keeps an owner: transfer ownership first.', { code: 'last_owner' });
}

/**
 * Changes a member's role. `actorRole` may hand out roles up to its own (never owner: that is a transfer)
 * and may not change an owner's role unless it is an owner itself.
 */
export async function changeMemberRole(db: Knex, opts: { workspaceId: string; userId: string; role: Role; actorRole: Role; actor: string }): Promise<Member> {
  if (!mayAssign(opts.actorRole, opts.role)) {
    throw new PermissionDeniedError(opts.role === 'owner' ? 'Ownership moves by transfer (POST /v1/organization/transfer_ownership).' : `A ${opts.actorRole} may not grant the ${opts.role} role.`, { code: 'insufficient_role' });
  }
  await db.transaction(async (trx) => {
    const current = await lockedMember(trx, opts.workspaceId, opts.userId);
    if (current.role === 'owner') {
      if (opts.actorRole !== 'owner') throw new PermissionDeniedError('Only an owner may change an owner\'s role.', { code: 'insufficient_role' });
      if (await ownerCount(trx, opts.workspaceId) <= 1) throw lastOwner();
    }
    await trx('members').where({ workspace_id: opts.workspaceId, user_id: opts.userId }).update({ role: opts.role });
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'member.role_change', subjectType: 'user', subjectId: opts.userId, data: { from: current.role, to: opts.role } });
  });
  return (await listMembers(db, opts.workspaceId)).find((m) => m.userId === opts.userId)!;
}

/** Removes a member (or lets one leave); their API keys stop working at once (see api/http/auth.ts). */
export async function removeMember(db: Knex, opts: { workspaceId: string; userId: string; actorRole: Role; actor: string; self: boolean }): Promise<void> {
  await db.transaction(async (trx) => {
    const current = await lockedMember(trx, opts.workspaceId, opts.userId);
    if (!opts.self && opts.actorRole !== 'owner' && !mayAssign(opts.actorRole, current.role)) {
      throw new PermissionDeniedError(`A ${opts.actorRole} may not remove a ${current.role}.`, { code: 'insufficient_role' });
    }
    if (current.role === 'owner' && await ownerCount(trx, opts.workspaceId) <= 1) throw lastOwner();
    await trx('members').where({ workspace_id: opts.workspaceId, user_id: opts.userId }).delete();
    await trx('sessions').where({ user_id: opts.userId, workspace_id: opts.workspaceId }).update({ workspace_id: null });
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: opts.self ? 'member.leave' : 'member.remove', subjectType: 'user', subjectId: opts.userId, data: { role: current.role } });
  });
}

/** Makes `toUserId` (a member) the owner; the previous owner stays on as admin. */
export async function transferOwnership(db: Knex, opts: { workspaceId: string; fromUserId: string; toUserId: string; actor: string }): Promise<void> {
  if (opts.fromUserId === opts.toUserId) throw new InvalidRequestError('You already own this workspace.', { param: 'user_id' });
  await db.transaction(async (trx) => {
    const from = await lockedMember(trx, opts.workspaceId, opts.fromUserId);
    if (from.role !== 'owner') throw new PermissionDeniedError('Only the owner may transfer ownership.', { code: 'insufficient_role' });
    await lockedMember(trx, opts.workspaceId, opts.toUserId);
    await trx('members').where({ workspace_id: opts.workspaceId, user_id: opts.toUserId }).update({ role: 'owner' });
    await trx('members').where({ workspace_id: opts.workspaceId, user_id: opts.fromUserId }).update({ role: 'admin' });
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'workspace.transfer_ownership', subjectType: 'user', subjectId: opts.toUserId, data: { from: opts.fromUserId } });
  });
}

export type InviteStatus = 'pending' | 'accepted' | 'expired' | 'revoked';

export interface Invitation {
  id: string;
  workspaceId: string;
  email: string;
  role: Role;
  status: InviteStatus;
  invitedAt: string;
  expiresAt: string;
  acceptedAt: string | null;
}

function toInvitation(row: Record<string, any>): Invitation {
  const status: InviteStatus = row.accepted_at ? 'accepted' : row.revoked_at ? 'revoked' : new Date(row.expires_at).getTime() <= Date.now() ? 'expired' : 'pending';
  return {
    id: row.id, workspaceId: row.workspace_id, email: row.email, role: row.role, status,
    invitedAt: new Date(row.created_at).toISOString(), expiresAt: new Date(row.expires_at).toISOString(),
    acceptedAt: row.accepted_at ? new Date(row.accepted_at).toISOString() : null,
  };
}

/** A new invitation and its secret token (for the e-mail's link); a pending one to the same address is replaced. */
export async function createInvitation(db: Knex, opts: { workspaceId: string; email: string; role: Role; actorRole: Role; invitedBy: string | null; actor: string }): Promise<{ invitation: Invitation; token: string }> {
  if (!mayAssign(opts.actorRole, opts.role)) throw new PermissionDeniedError(`A ${opts.actorRole} may not invite someone as ${opts.role}.`, { code: 'insufficient_role' });
  const already = await db('members as m').join('users as u', 'u.id', 'm.user_id')
    .where('m.workspace_id', opts.workspaceId).whereRaw('lower(u.email) = ?', [opts.email]).first('u.id');
  if (already) throw new ConflictError(`${opts.email} is already a member of this workspace.`, { code: 'already_member', param: 'email' });
  const { token, hash } = newSecretToken();
  const id = newId('invite');
  const row = await db.transaction(async (trx) => {
    await trx('invitations').where({ workspace_id: opts.workspaceId, email: opts.email }).whereNull('accepted_at').whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
    const [inserted] = await trx('invitations').insert({
      id, workspace_id: opts.workspaceId, email: opts.email, role: opts.role, token_hash: hash, invited_by: opts.invitedBy, expires_at: new Date(Date.now() + INVITE_TTL_MS),
    }, '*');
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'invite.create', subjectType: 'invite', subjectId: id, data: { email: opts.email, role: opts.role } });
    return inserted;
  });
  return { invitation: toInvitation(row), token };
}

export async function listInvitations(db: Knex, workspaceId: string): Promise<Invitation[]> {
  const rows = await db('invitations').where({ workspace_id: workspaceId }).orderBy('created_at', 'desc').limit(200);
  return rows.map(toInvitation);
}

export async function getInvitation(db: Knex, workspaceId: string, id: string): Promise<Invitation> {
  const row = await db('invitations').where({ workspace_id: workspaceId, id }).first();
  if (!row) throw new NotFoundError(`No invite '${id}'`, { code: 'invite_not_found' });
  return toInvitation(row);
}

export async function revokeInvitation(db: Knex, opts: { workspaceId: string; id: string; actor: string }): Promise<Invitation> {
  return db.transaction(async (trx) => {
    const [row] = await trx('invitations').where({ workspace_id: opts.workspaceId, id: opts.id }).whereNull('accepted_at')
      .update({ revoked_at: trx.raw('coalesce(revoked_at, now())') }, '*');
    if (!row) {
      const exists = await trx('invitations').where({ workspace_id: opts.workspaceId, id: opts.id }).first('id');
      if (!exists) throw new NotFoundError(`No invite '${opts.id}'`, { code: 'invite_not_found' });
      throw new ConflictError('This invitation was already accepted.', { code: 'invite_accepted' });
    }
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'invite.revoke', subjectType: 'invite', subjectId: opts.id });
    return toInvitation(row);
  });
}

/** What an invitation link shows before it is accepted. */
export async function previewInvitation(db: Knex, token: unknown): Promise<Invitation & { workspaceName: string }> {
  const row = await invitationByToken(db, token);
  const workspace = await getWorkspace(db, row.workspace_id);
  return { ...toInvitation(row), workspaceName: workspace.name };
}

/** Whether `token` names a pending (not accepted, revoked or expired) invitation to `email`. */
export async function isPendingInvitationFor(db: Knex, token: unknown, email: string): Promise<boolean> {
  const row = looksLikeSecretToken(token) ? await db('invitations').where({ token_hash: hashSecretToken(token) }).first() : null;
  return Boolean(row) && row.email === email.toLowerCase() && toInvitation(row).status === 'pending';
}

async function invitationByToken(db: Knex | Knex.Transaction, token: unknown): Promise<Record<string, any>> {
  const row = looksLikeSecretToken(token) ? await db('invitations').where({ token_hash: hashSecretToken(token) }).first() : null;
  if (!row) throw new NotFoundError('This invitation link is not valid.', { code: 'invite_not_found' });
  return row;
}

/** The signed-in person (whose verified address must be the invited one) joins with the invitation's role. */
export async function acceptInvitation(db: Knex, opts: { token: unknown; userId: string; email: string }): Promise<{ workspaceId: string; role: Role }> {
  return db.transaction(async (trx) => {
    const row = await invitationByToken(trx, opts.token);
    const invitation = toInvitation(row);
    if (invitation.status !== 'pending') throw new ConflictError(`This invitation is ${invitation.status}.`, { code: `invite_${invitation.status}` });
    if (row.email !== opts.email.toLowerCase()) {
      throw new PermissionDeniedError(`This invitation is for ${row.email}; sign in with that address to accept it.`, { code: 'invite_email_mismatch' });
    }
    await trx('invitations').where({ id: row.id }).update({ accepted_at: trx.fn.now(), accepted_by: opts.userId });
    await trx('members').insert({ workspace_id: row.workspace_id, user_id: opts.userId, role: row.role }).onConflict(['workspace_id', 'user_id']).ignore();
    await audit(trx, { workspaceId: row.workspace_id, actor: `user:${opts.userId}`, action: 'invite.accept', subjectType: 'invite', subjectId: row.id, data: { role: row.role } });
    return { workspaceId: row.workspace_id, role: row.role };
  });
}
