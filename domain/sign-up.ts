/**
 * Who may create an account, and sign-up itself.
 *
 * The deployment decides who comes in: `SIGNUP_MODE` open (anyone), invite-only (a person holding a pending
 * invitation to the address they sign up with, who joins the inviting workspace and gets none of their own)
 * or closed (nobody: accounts come from the CLI), and optionally a list of e-mail domains.
 *
 * Sign-up never tells whether an address has an account: a taken address gets the same answer as a new one,
 * after the same password hashing, and the e-mail tells the address's owner instead (a fresh verification
 * link when the account was never confirmed, else that someone tried to sign up with it). The workspace
 * a new person gets may spend, and receives its plan's credits, only once the address is confirmed
 * (domain/members.ts `activateWorkspacesOf`).
 */
import type { Knex } from 'knex';
import type { SignupMode } from '../config/env';
import { PermissionDeniedError } from '../core/errors';
import { checkPassword, createUser, displayName, hashPassword, issueUserToken, userByEmail, type User } from './accounts';
import { countAccountMail } from './account-mail';
import { createWorkspaceWithOwner, isPendingInvitationFor } from './members';
import type { WindowCounters } from './rate-limits';

export interface SignupPolicy {
  mode: SignupMode;
  /** E-mail domains sign-up takes (lower case); empty: any. */
  allowedDomains: readonly string[];
}

/** What sign-up did; the caller answers the same for each and sends the e-mail it names. */
export type SignUpOutcome =
  /** A new account (and, in open mode, its own workspace, waiting for the address to be confirmed). */
  | { kind: 'created'; user: User; verifyToken: string }
  /** The address has an account that was never confirmed: a fresh verification link for its owner. */
  | { kind: 'unconfirmed'; user: User; verifyToken: string }
  /** The address has a confirmed account: its owner is told someone tried to sign up with it. */
  | { kind: 'taken'; user: User };

/**
 * Signs `email` up under `policy`: refuses what the policy does not admit (403, the same whether or not the
 * address has an account), counts a verification e-mail against the address's limit, then creates the
 * account or reports the existing one. `inviteToken` is an invitation link's token (required invite-only).
 */
export async function signUp(db: Knex, counters: WindowCounters, policy: SignupPolicy, input: {
  email: string; password: unknown; name?: unknown; inviteToken?: unknown;
}): Promise<SignUpOutcome> {
  const { email } = input;
  const password = checkPassword(input.password);
  await checkAdmission(db, policy, email, input.inviteToken);
  await countAccountMail(counters, 'verify', email);
  const existing = await userByEmail(db, email);
  if (existing) {
    // The work a new account costs, so the answer's timing does not tell the address has one.
    await hashPassword(password);
    if (existing.emailVerified) return { kind: 'taken', user: existing };
    return { kind: 'unconfirmed', user: existing, verifyToken: await issueUserToken(db, existing.id, 'verify_email') };
  }
  const user = await createUser(db, { email, password, name: typeof input.name === 'string' ? input.name : undefined, actor: 'signup' });
  // Invited people join the workspace that invited them; only open sign-up makes a workspace of one's own.
  if (policy.mode === 'open') await createWorkspaceWithOwner(db, { name: `${user.name}'s workspace`, userId: user.id, activated: false });
  return { kind: 'created', user, verifyToken: await issueUserToken(db, user.id, 'verify_email') };
}

/** The name sign-up answers with: the one a new account would get (the same for a taken address). */
export function signUpName(email: string, name: unknown): string {
  return displayName(email, typeof name === 'string' ? name : undefined);
}

async function checkAdmission(db: Knex, policy: SignupPolicy, email: string, inviteToken: unknown): Promise<void> {
  if (policy.mode === 'closed') {
    throw new PermissionDeniedError('Sign-up is closed on this gateway: ask its administrator for an account.', { code: 'signup_closed' });
  }
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (policy.allowedDomains.length > 0 && !policy.allowedDomains.includes(domain)) {
    throw new PermissionDeniedError(`Sign-up takes addresses at ${policy.allowedDomains.join(', ')} only.`, { code: 'email_domain_not_allowed', param: 'email' });
  }
  if (policy.mode === 'invite-only' && !(await isPendingInvitationFor(db, inviteToken, email))) {
    throw new PermissionDeniedError(
      'Sign-up is by invitation: open the link of an invitation sent to this address, and sign up from there.',
      { code: 'invitation_required', param: 'invite_token' },
    );
  }
}
