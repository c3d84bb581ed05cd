/**
 * People: accounts with an e-mail and an argon2id password hash, one-time e-mail tokens (verification,
 * password reset) and sessions. Session tokens and e-mail tokens are random; only their hashes are stored.
 * Sign-in is throttled per account and per client address through the shared window counters.
 */
import type { Knex } from 'knex';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import { AuthenticationError, ConflictError, InvalidRequestError, PermissionDeniedError, RateLimitError } from '../core/errors';
import { newId } from '../core/ids';
import { audit } from './audit';
import { activateWorkspacesOf } from './members';
import type { WindowCounters } from './rate-limits';
import { hashSecretToken, looksLikeSecretToken, newSecretToken } from './secret-tokens';

export interface User {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  createdAt: string;
}

export const SESSION_TTL_MS = 30 * 24 * 3600_000;
const TOKEN_TTL_MS = { verify_email: 24 * 3600_000, reset_password: 3600_000 } as const;
type TokenPurpose = keyof typeof TOKEN_TTL_MS;

/** Sign-in attempts per 15 minutes: per account (guessing one password) and per address (spraying many). */
export const LOGIN_LIMITS = { perAccount: 10, perAddress: 50, windowMs: 15 * 60_000 };

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

export function normalizeEmail(value: unknown, param = 'email'): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (!EMAIL_RE.test(email) || email.length > 254) throw new InvalidRequestError('Enter a valid e-mail address.', { param, code: 'invalid_email' });
  return email;
}

export function checkPassword(value: unknown): string {
  if (typeof value !== 'string' || value.length < 10 || value.length > 200) {
    throw new InvalidRequestError('A password has 10 to 200 characters.', { param: 'password', code: 'weak_password' });
  }
  return value;
}

/** The name an account gets: the one given (up to 200 characters), else the address's local part. */
export function displayName(email: string, name?: string): string {
  return (name ?? '').trim().slice(0, 200) || email.split('@')[0];
}

export function toUser(row: Record<string, any>): User {
  return { id: row.id, email: row.email, name: row.name, emailVerified: row.email_verified_at != null, createdAt: new Date(row.created_at).toISOString() };
}

export async function hashPassword(password: string): Promise<string> {
  // argon2id with the OWASP baseline (19 MiB, 2 passes, 1 lane): the library's defaults.
  return argonHash(password);
}

export async function createUser(db: Knex | Knex.Transaction, opts: { email: string; password: string; name?: string; verified?: boolean; actor: string }): Promise<User> {
  const email = normalizeEmail(opts.email);
  const password = checkPassword(opts.password);
  const name = displayName(email, opts.name);
  if (await db('users').whereRaw('lower(email) = ?', [email]).first('id')) {
    throw new ConflictError('An account with this e-mail address already exists. Sign in or reset your password.', { code: 'email_taken', param: 'email' });
  }
  const id = newId('user');
  const [row] = await db('users').insert({
    id, email, name, password_hash: await hashPassword(password), email_verified_at: opts.verified ? db.fn.now() : null,
  }, '*');
  await audit(db, { workspaceId: null, actor: opts.actor, action: 'user.create', subjectType: 'user', subjectId: id, data: { email } });
  return toUser(row);
}

export async function getUser(db: Knex, id: string): Promise<User | null> {
  const row = await db('users').where({ id }).first();
  return row ? toUser(row) : null;
}

export async function userByEmail(db: Knex, email: string): Promise<User | null> {
  const row = await db('users').whereRaw('lower(email) = ?', [email.toLowerCase()]).first();
  return row ? toUser(row) : null;
}

/** A fresh one-time token for `purpose`; earlier unused ones of the same purpose stop working. */
export async function issueUserToken(db: Knex, userId: string, purpose: TokenPurpose): Promise<string> {
  const { token, hash } = newSecretToken();
  await db.transaction(async (trx) => {
    await trx('user_tokens').where({ user_id: userId, purpose }).whereNull('used_at').update({ used_at: trx.fn.now() });
    await trx('user_tokens').insert({ token_hash: hash, user_id: userId, purpose, expires_at: new Date(Date.now() + TOKEN_TTL_MS[purpose]) });
  });
  return token;
}

/** Spends a one-time token: returns its user, or throws when it is unknown, used or expired. */
async function consumeUserToken(trx: Knex.Transaction, token: unknown, purpose: TokenPurpose): Promise<string> {
  const invalid = new InvalidRequestError('This link is invalid or has expired. Ask for a new one.', { code: 'invalid_token', param: 'token' });
  if (!looksLikeSecretToken(token)) throw invalid;
  const [row] = await trx('user_tokens')
    .where({ token_hash: hashSecretToken(token), purpose }).whereNull('used_at').andWhere('expires_at', '>', trx.fn.now())
    .update({ used_at: trx.fn.now() }, ['user_id']);
  if (!row) throw invalid;
  return row.user_id;
}

/** Confirms the address a verification link was sent to; the workspaces the person made at sign-up become active. */
export async function verifyEmail(db: Knex, token: unknown): Promise<User> {
  return db.transaction(async (trx) => {
    const userId = await consumeUserToken(trx, token, 'verify_email');
    const [row] = await trx('users').where({ id: userId }).update({ email_verified_at: trx.raw('coalesce(email_verified_at, now())') }, '*');
    await audit(trx, { workspaceId: null, actor: `user:${userId}`, action: 'user.verify_email', subjectType: 'user', subjectId: userId });
    await activateWorkspacesOf(trx, userId);
    return toUser(row);
  });
}

/** Sets a new password from a reset link; every session of the account ends (whoever had it is out). */
export async function resetPassword(db: Knex, token: unknown, password: unknown): Promise<User> {
  const checked = checkPassword(password);
  const passwordHash = await hashPassword(checked);
  return db.transaction(async (trx) => {
    const userId = await consumeUserToken(trx, token, 'reset_password');
    // Following the link proves the address too.
    const [row] = await trx('users').where({ id: userId }).update({ password_hash: passwordHash, email_verified_at: trx.raw('coalesce(email_verified_at, now())') }, '*');
    await trx('sessions').where({ user_id: userId }).delete();
    await audit(trx, { workspaceId: null, actor: `user:${userId}`, action: 'user.reset_password', subjectType: 'user', subjectId: userId });
    await activateWorkspacesOf(trx, userId);
    return toUser(row);
  });
}

export interface SignedIn {
  user: User;
  sessionId: string;
  token: string;
}

/**
 * Checks the throttles, then the password (argon2 verify runs even for unknown addresses, so timing does
 * not tell which addresses have accounts). Unverified addresses may not sign in.
 */
export async function signIn(db: Knex, counters: WindowCounters, opts: { email: unknown; password: unknown; ip: string }): Promise<SignedIn> {
  const email = typeof opts.email === 'string' ? opts.email.trim().toLowerCase() : '';
  const password = typeof opts.password === 'string' ? opts.password : '';
  for (const [bucket, limit] of [[`login:account:${email}`, LOGIN_LIMITS.perAccount], [`login:ip:${opts.ip}`, LOGIN_LIMITS.perAddress]] as const) {
    const hit = await counters.hit(bucket, LOGIN_LIMITS.windowMs, limit);
    if (!hit.allowed) {
      throw new RateLimitError('Too many sign-in attempts. Wait a few minutes and try again.', { retryAfterSeconds: hit.resetMs / 1000, code: 'too_many_sign_in_attempts' });
    }
  }
  const row = email ? await db('users').whereRaw('lower(email) = ?', [email]).first() : null;
  const ok = await argonVerify(row?.password_hash ?? await unknownAccountHash(), password || ' ').catch(() => false);
  if (!row || !ok) throw new AuthenticationError('Wrong e-mail address or password.', { code: 'invalid_credentials' });
  if (!row.email_verified_at) {
    throw new PermissionDeniedError('Confirm your e-mail address first: open the link we sent you (or ask for a new one).', { code: 'email_not_verified' });
  }
  const session = await createSession(db, row.id);
  await audit(db, { workspaceId: null, actor: `user:${row.id}`, action: 'session.create', subjectType: 'session', subjectId: session.sessionId, data: { ip: opts.ip } });
  return { user: toUser(row), ...session };
}

// A real argon2id hash of a random secret, so unknown accounts cost the same verify as known ones.
let dummyHash: Promise<string> | null = null;
function unknownAccountHash(): Promise<string> {
  dummyHash ??= hashPassword(newSecretToken().token);
  return dummyHash;
}

export async function createSession(db: Knex, userId: string): Promise<{ sessionId: string; token: string }> {
  const { token, hash } = newSecretToken();
  const sessionId = newId('sess');
  const first = await db('members').where({ user_id: userId }).orderBy('created_at').first('workspace_id');
  await db('sessions').insert({ id: sessionId, user_id: userId, token_hash: hash, workspace_id: first?.workspace_id ?? null, expires_at: new Date(Date.now() + SESSION_TTL_MS) });
  return { sessionId, token };
}

export interface SessionRow {
  id: string;
  userId: string;
  workspaceId: string | null;
}

/** The live session a cookie's token names (null when unknown or expired); touches last_seen_at. */
export async function sessionByToken(db: Knex, token: string): Promise<SessionRow | null> {
  if (!looksLikeSecretToken(token)) return null;
  const [row] = await db('sessions')
    .where({ token_hash: hashSecretToken(token) }).andWhere('expires_at', '>', db.fn.now())
    .update({ last_seen_at: db.fn.now() }, ['id', 'user_id', 'workspace_id']);
  return row ? { id: row.id, userId: row.user_id, workspaceId: row.workspace_id } : null;
}

export async function endSession(db: Knex, sessionId: string): Promise<void> {
  await db('sessions').where({ id: sessionId }).delete();
}

/** Signs the person out on every device. */
export async function endAllSessions(db: Knex, userId: string): Promise<number> {
  const ended = await db('sessions').where({ user_id: userId }).delete();
  await audit(db, { workspaceId: null, actor: `user:${userId}`, action: 'session.revoke_all', subjectType: 'user', subjectId: userId, data: { ended } });
  return ended;
}
