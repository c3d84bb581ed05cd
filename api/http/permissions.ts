import { PermissionDeniedError } from '../../core/errors';
import { can, type Permission } from '../../domain/permissions';
import type { GatewayContext } from './context';

/** Refuses (403 `insufficient_role`) unless the caller's role has `permission` in the matrix. */
export function requirePermission(ctx: GatewayContext, permission: Permission): void {
  const { role } = ctx.state.auth;
  if (!can(role, permission)) {
    throw new PermissionDeniedError(`The ${role} role may not do this (needs '${permission}').`, { code: 'insufficient_role' });
  }
}
