import { PermissionDeniedError } from '../../core/errors';
import type { Role } from '../../domain/workspaces';
import type { GatewayContext } from './context';

/** Workspace administration is for keys whose role allows it (roles are set when a key is created). */
export function requireRole(ctx: GatewayContext, roles: readonly Role[]): void {
  const role = ctx.state.auth.role;
  if (!roles.includes(role)) {
    throw new PermissionDeniedError(`This API key's role (${role}) may not do this; it needs one of: ${roles.join(', ')}.`, { code: 'insufficient_role' });
  }
}
