/**
 * The one guard of every route: `requirePermission('models.use')` lets the request through only when the
 * caller's role holds the permission in the matrix (domain/permissions.ts). The role comes from
 * `ctx.state.auth`, whatever credential put it there (an API key or a web-app session). A workspace made at
 * sign-up spends nothing (models, Playground) until its owner confirmed their e-mail address. A refused
 * request's body is read and dropped before the 403 goes out, so an upload is not stored and the client,
 * still sending, reads the answer.
 */
import type Koa from 'koa';
import { PermissionDeniedError } from '../../core/errors';
import { can, deniedCode, PERMISSIONS, rolesWith, type Permission } from '../../domain/permissions';
import type { Role } from '../../domain/workspaces';
import type { GatewayState } from './context';
import { drainBody } from './body';

export function requirePermission(permission: Permission): Koa.Middleware<GatewayState> {
  return async (ctx, next) => {
    const refusal = refusalOf(ctx.state.auth, permission);
    if (refusal) {
      await drainBody(ctx.req);
      throw refusal;
    }
    await next();
  };
}

/** Permissions that spend the workspace's credits: refused, whatever the role, while the workspace is not active. */
const SPENDING: ReadonlySet<Permission> = new Set(['models.use', 'playground.use', 'batches.write']);

function refusalOf(auth: GatewayState['auth'], permission: Permission): PermissionDeniedError | null {
  if (!can(auth.role, permission)) return permissionDenied(auth.role, permission);
  if (SPENDING.has(permission) && !auth.workspaceActive) {
    return new PermissionDeniedError(
      'This workspace cannot spend credits yet: its owner has not confirmed their e-mail address (open the link sent at sign-up, or ask for a new one).',
      { code: 'email_not_verified' },
    );
  }
  return null;
}

export function permissionDenied(role: Role, permission: Permission): PermissionDeniedError {
  const allowed = rolesWith(permission);
  return new PermissionDeniedError(
    `The role '${role}' may not ${PERMISSIONS[permission].allows}; that takes one of these roles: ${allowed.join(', ')}.`,
    { code: deniedCode(permission) },
  );
}

/** The same check inside a handler (where the permission depends on what the request asks for). */
export function assertPermission(ctx: { state: GatewayState }, permission: Permission): void {
  const refusal = refusalOf(ctx.state.auth, permission);
  if (refusal) throw refusal;
}
