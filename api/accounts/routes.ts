/**
 * The web app's own endpoints under /api (session cookie, same-origin only for every state change):
 *   GET  /api/auth/captcha             a proof-of-work challenge for the ALTCHA widget
 *   GET  /api/auth/signup-policy       who may sign up (SIGNUP_MODE, the allowed e-mail domains), for the sign-up page
 *   POST /api/auth/signup              {email, password, name?, altcha, invite_token?}: account (+ own workspace in open
 *                                      mode); the same 201 whether or not the address has an account (the e-mail differs)
 *   POST /api/auth/verify              {token, invite_token?}: confirms the address (its workspaces become active) and
 *                                      signs in; with the invitation the account was made from, joins its workspace
 *   POST /api/auth/resend              {email}: a new verification e-mail (202 whether or not the account exists)
 *   POST /api/auth/signin              {email, password}: throttled per account and address
 *   POST /api/auth/signout             this session; /api/auth/signout-all: every session of the account
 *   POST /api/auth/forgot              {email}: a password reset e-mail (202 always)
 * Verification and reset e-mails are limited per address (domain/account-mail.ts), whether or not it has an
 * account; they go out after the answer, so its timing does not tell either.
 *   POST /api/auth/reset               {token, password}: new password, every session ends
 *   GET  /api/me                       the person (null when signed out), their workspaces, their role and permissions in the active one
 *   POST /api/workspaces               {name}: a new workspace (the caller owns it) and switch to it
 *   POST /api/workspaces/switch        {workspace_id}
 *   GET  /api/invites/:token           what an invitation link offers
 *   POST /api/invites/accept           {token}
 *   POST /api/contact                  {email, message, altcha}
 *   GET  /api/permissions              the permission matrix
 */
import Router from '@koa/router';
import type Koa from 'koa';
import type { AppDeps, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { ipLimitMiddleware } from '../http/ip-limit';
import { clearSessionCookie, currentSession, requireSameOrigin, requireSession, setSessionCookie } from '../http/session';
import { createSession, endAllSessions, endSession, issueUserToken, normalizeEmail, resetPassword, signIn, userByEmail, verifyEmail } from '../../domain/accounts';
import { accountMailer, countAccountMail, mailText } from '../../domain/account-mail';
import { signUp, signUpName, type SignupPolicy } from '../../domain/sign-up';
import { newCaptchaChallenge, verifyCaptcha, type CaptchaSettings } from '../../domain/captcha';
import { acceptInvitation, createWorkspaceWithOwner, memberRole, previewInvitation, workspacesOfUser } from '../../domain/members';
import { permissionMatrix, permissionsOf } from '../../domain/permissions';
import { audit } from '../../domain/audit';
import { ConflictError, InvalidRequestError, NotFoundError, PermissionDeniedError } from '../../core/errors';

export function accountsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/api' });
  const mailer = accountMailer({ smtpUrl: deps.config.smtpUrl ?? null, from: deps.config.smtpFrom }, deps.log);
  const captcha: CaptchaSettings = { secret: deps.config.captchaSecret, cost: deps.config.captchaCost, maxCounter: deps.config.captchaMaxCounter };
  const policy: SignupPolicy = { mode: deps.config.signupMode, allowedDomains: deps.config.signupAllowedDomains };
  // Every link in an e-mail is built from the public address, never from the request's Host header.
  const link = (path: string) => `${deps.publicUrl()}${path}`;
  const body = (ctx: Koa.Context) => readJsonBody(ctx, 64 * 1024);
  /**
   * Sends after the answer: whether an address has an account decides whether a mail goes out, and the SMTP
   * round trip would show in the answer's timing. A failure is logged (the person can ask again).
   */
  const sendLater = (to: string, mail: { subject: string; text: string }) => {
    void mailer.send(to, mail.subject, mail.text).catch((err: unknown) => deps.log.warn({ err, subject: mail.subject }, 'account e-mail not sent'));
  };
  const verifyLink = (token: string, inviteToken: unknown) =>
    link(`/verify?token=${token}${typeof inviteToken === 'string' && inviteToken ? `&invite=${encodeURIComponent(inviteToken)}` : ''}`);

  router.use(ipLimitMiddleware(deps.counters, { limit: deps.config.ipRateLimit }));
  router.use(async (ctx, next) => {
    requireSameOrigin(ctx);
    ctx.set('cache-control', 'no-store');
    await next();
  });

  router.get('/auth/captcha', async (ctx) => {
    ctx.body = await newCaptchaChallenge(captcha);
  });

  router.get('/auth/signup-policy', (ctx) => {
    ctx.body = { object: 'signup_policy', mode: policy.mode, allowed_domains: policy.allowedDomains };
  });

  router.post('/auth/signup', async (ctx) => {
    const b = await body(ctx);
    const email = normalizeEmail(b.email);
    await verifyCaptcha(deps.db, captcha, b.altcha);
    const outcome = await signUp(deps.db, deps.counters, policy, { email, password: b.password, name: b.name, inviteToken: b.invite_token });
    if (outcome.kind === 'taken') sendLater(email, mailText.alreadyRegistered(link('/sign-in'), link('/forgot')));
    else sendLater(email, mailText.verify(verifyLink(outcome.verifyToken, b.invite_token)));
    ctx.status = 201;
    ctx.body = { object: 'user', email, name: signUpName(email, b.name), email_verified: false };
  });

  router.post('/auth/verify', async (ctx) => {
    const b = await body(ctx);
    const user = await verifyEmail(deps.db, b.token);
    const session = await createSession(deps.db, user.id);
    setSessionCookie(ctx, session.token);
    // An account made from an invitation link joins the inviting workspace as soon as its address is confirmed
    // (the invitation is for this address: acceptInvitation checks). One no longer valid leaves the account as it
    // is; the page then shows the invitation's state.
    const joined = b.invite_token === undefined ? null
      : await acceptInvitation(deps.db, { token: b.invite_token, userId: user.id, email: user.email }).catch((err: unknown) => {
        if (err instanceof ConflictError || err instanceof NotFoundError || err instanceof PermissionDeniedError || err instanceof InvalidRequestError) return null;
        throw err;
      });
    if (joined) await deps.db('sessions').where({ id: session.sessionId }).update({ workspace_id: joined.workspaceId });
    ctx.body = {
      object: 'user', id: user.id, email: user.email, name: user.name, email_verified: true,
      joined: joined ? { workspace_id: joined.workspaceId, role: joined.role } : null,
    };
  });

  router.post('/auth/resend', async (ctx) => {
    const email = normalizeEmail((await body(ctx)).email);
    await countAccountMail(deps.counters, 'verify', email);
    const user = await userByEmail(deps.db, email);
    if (user && !user.emailVerified) sendLater(user.email, mailText.verify(verifyLink(await issueUserToken(deps.db, user.id, 'verify_email'), null)));
    ctx.status = 202;
    ctx.body = { sent: true };
  });

  router.post('/auth/signin', async (ctx) => {
    const b = await body(ctx);
    const signedIn = await signIn(deps.db, deps.counters, { email: b.email, password: b.password, ip: ctx.ip });
    setSessionCookie(ctx, signedIn.token);
    ctx.body = { object: 'user', id: signedIn.user.id, email: signedIn.user.email, name: signedIn.user.name, email_verified: true };
  });

  router.post('/auth/signout', async (ctx) => {
    const signedIn = await requireSession(ctx, deps.db);
    await endSession(deps.db, signedIn.sessionId);
    clearSessionCookie(ctx);
    ctx.body = { signed_out: 1 };
  });

  router.post('/auth/signout-all', async (ctx) => {
    const signedIn = await requireSession(ctx, deps.db);
    const ended = await endAllSessions(deps.db, signedIn.user.id);
    clearSessionCookie(ctx);
    ctx.body = { signed_out: ended };
  });

  router.post('/auth/forgot', async (ctx) => {
    const email = normalizeEmail((await body(ctx)).email);
    await countAccountMail(deps.counters, 'reset', email);
    const user = await userByEmail(deps.db, email);
    if (user) sendLater(user.email, mailText.reset(link(`/reset?token=${await issueUserToken(deps.db, user.id, 'reset_password')}`)));
    ctx.status = 202;
    ctx.body = { sent: true };
  });

  router.post('/auth/reset', async (ctx) => {
    const b = await body(ctx);
    const user = await resetPassword(deps.db, b.token, b.password);
    ctx.body = { object: 'user', id: user.id, email: user.email, name: user.name, email_verified: true };
  });

  // Signed out is an answer here, not an error: the app asks on every load.
  router.get('/me', async (ctx) => {
    const signedIn = await currentSession(ctx, deps.db);
    if (!signedIn) {
      ctx.body = { user: null, workspaces: [], workspace: null };
      return;
    }
    const workspaces = await workspacesOfUser(deps.db, signedIn.user.id);
    const active = workspaces.find((w) => w.id === signedIn.workspaceId) ?? null;
    ctx.body = {
      user: { id: signedIn.user.id, email: signedIn.user.email, name: signedIn.user.name },
      workspaces: workspaces.map((w) => ({ id: w.id, name: w.name, role: w.role, plan: w.planId })),
      workspace: active && { id: active.id, name: active.name, role: active.role, plan: active.planId, permissions: permissionsOf(active.role) },
    };
  });

  router.post('/workspaces', async (ctx) => {
    const signedIn = await requireSession(ctx, deps.db);
    const b = await body(ctx);
    const workspace = await createWorkspaceWithOwner(deps.db, { name: typeof b.name === 'string' ? b.name : '', userId: signedIn.user.id });
    await deps.db('sessions').where({ id: signedIn.sessionId }).update({ workspace_id: workspace.id });
    ctx.status = 201;
    ctx.body = { id: workspace.id, name: workspace.name, role: 'owner', plan: workspace.planId };
  });

  router.post('/workspaces/switch', async (ctx) => {
    const signedIn = await requireSession(ctx, deps.db);
    const workspaceId = (await body(ctx)).workspace_id;
    if (typeof workspaceId !== 'string') throw new InvalidRequestError('workspace_id is required', { param: 'workspace_id' });
    const role = await memberRole(deps.db, workspaceId, signedIn.user.id);
    if (!role) throw new PermissionDeniedError('You are not a member of that workspace.', { code: 'not_a_member' });
    await deps.db('sessions').where({ id: signedIn.sessionId }).update({ workspace_id: workspaceId });
    ctx.body = { workspace_id: workspaceId, role };
  });

  router.get('/invites/:token', async (ctx) => {
    const invite = await previewInvitation(deps.db, ctx.params.token);
    ctx.body = { object: 'organization.invite', email: invite.email, role: invite.role, status: invite.status, workspace: { id: invite.workspaceId, name: invite.workspaceName }, expires_at: invite.expiresAt };
  });

  router.post('/invites/accept', async (ctx) => {
    const signedIn = await requireSession(ctx, deps.db);
    const joined = await acceptInvitation(deps.db, { token: (await body(ctx)).token, userId: signedIn.user.id, email: signedIn.user.email });
    await deps.db('sessions').where({ id: signedIn.sessionId }).update({ workspace_id: joined.workspaceId });
    ctx.body = { workspace_id: joined.workspaceId, role: joined.role };
  });

  router.post('/contact', async (ctx) => {
    const b = await body(ctx);
    const email = normalizeEmail(b.email);
    const message = typeof b.message === 'string' ? b.message.trim() : '';
    if (!message || message.length > 5000) throw new InvalidRequestError('Write a message of up to 5000 characters.', { param: 'message' });
    await verifyCaptcha(deps.db, captcha, b.altcha);
    const [row] = await deps.db('contact_messages').insert({ email, message }, ['id']);
    await audit(deps.db, { workspaceId: null, actor: `contact:${email}`, action: 'contact.message', subjectType: 'contact_message', subjectId: String(row.id) });
    ctx.status = 201;
    ctx.body = { received: true };
  });

  router.get('/permissions', (ctx) => {
    ctx.body = { object: 'permission_matrix', permissions: permissionMatrix() };
  });

  return router;
}
