/**
 * The permission matrix, as data: which role may do what in the spec's four areas (Playground, API keys,
 * billing, admin settings). Routes ask `can(role, permission)`; the app reads the same table (via
 * /api/me) to show only what the role may see. Roles are also ordered, so that an API key never has more
 * power than the member who created it: its effective role is the lower of the two.
 */
import type { Role } from './workspaces';

export type Permission =
  | 'playground.use'
  | 'api_keys.read'
  | 'api_keys.create'
  | 'api_keys.manage_all'
  | 'billing.read'
  | 'billing.manage'
  | 'budget_alerts.manage'
  | 'usage.read'
  | 'members.read'
  | 'members.manage'
  | 'workspace.manage'
  | 'admin_keys.manage';

type Matrix = Record<Permission, readonly Role[]>;

export const PERMISSIONS: Matrix = {
  // Playground
  'playground.use': ['owner', 'admin', 'developer'],
  // API keys: developers make and revoke their own keys; owners and admins everyone's.
  'api_keys.read': ['owner', 'admin', 'developer'],
  'api_keys.create': ['owner', 'admin', 'developer'],
  'api_keys.manage_all': ['owner', 'admin'],
  // Billing
  'billing.read': ['owner', 'billing'],
  'billing.manage': ['owner', 'billing'],
  'budget_alerts.manage': ['owner', 'admin', 'billing'],
  'usage.read': ['owner', 'admin', 'billing'],
  // Admin settings (everyone sees who is in the workspace; a Viewer has read-only access)
  'members.read': ['owner', 'admin', 'developer', 'billing', 'viewer'],
  'members.manage': ['owner', 'admin'],
  // Renaming the workspace, fallback chains, audit log
  'workspace.manage': ['owner', 'admin'],
  'admin_keys.manage': ['owner', 'admin'],
};

export function can(role: Role, permission: Permission): boolean {
  return PERMISSIONS[permission].includes(role);
}

export function permissionsOf(role: Role): Permission[] {
  return (Object.keys(PERMISSIONS) as Permission[]).filter((p) => can(role, p));
}

/** Most to least powerful; billing sits below developer because it may not touch keys or the Playground. */
const RANK: Record<Role, number> = { owner: 4, admin: 3, developer: 2, billing: 1, viewer: 0 };

export function lowerRole(a: Role, b: Role): Role {
  return RANK[a] <= RANK[b] ? a : b;
}

/** Whether `actor` may hand out or take away `role` (only an owner makes owners, via transfer). */
export function mayAssign(actor: Role, role: Role): boolean {
  return role !== 'owner' && RANK[actor] >= RANK['admin'] && RANK[actor] >= RANK[role];
}
