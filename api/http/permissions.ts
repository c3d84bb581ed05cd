/**
 * The one guard of every route: `requirePermission('models.use')` lets the request through only when the
 * caller's role holds the permission in the matrix (domain/permissions.ts). The role comes from
 * `ctx.state.auth`, whatever credential put it there (an API key now, a web-app session later). A refused
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
    const { role } = ctx.state.auth;
    if (!can(role, permission)) {
      await drainBody(ctx.req);
      throw permissionDenied(role, permission);
    }
    await next();
  };
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
  const { role } = ctx.state.auth;
  if (!can(role, permission)) throw permissionDenied(role, permission);
}
