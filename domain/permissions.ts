/**
 * Who may do what in a workspace, as data: the five roles over the product's four areas (Playground, API
 * keys, billing, admin settings). One guard (api/http/permissions.ts) checks it on every route, whatever
 * the caller's credential: an API key (its effective role is the lower of its own and its creator's), an
 * admin key, or a member's session in the web app, which reads the same table (/api/me) to show only what
 * the role may see. README.md shows the same table (a test keeps the two in step).
 */
import type { Role } from './workspaces';

export type Area = 'playground' | 'api_keys' | 'billing' | 'admin_settings';

interface PermissionInfo {
  area: Area;
  /** What it allows, as the README and refusals say it. */
  allows: string;
  /** The error code of a refusal (`insufficient_role` unless a sharper one helps the caller). */
  deniedCode?: string;
}

export const PERMISSIONS = {
  'models.read': { area: 'playground', allows: 'list and read models, ping the gateway' },
  'models.use': { area: 'playground', allows: 'call model endpoints (spends credits)', deniedCode: 'role_cannot_use_models' },
  'playground.use': { area: 'playground', allows: 'chat and generate in the Playground (spends credits)', deniedCode: 'role_cannot_use_models' },
  'files.read': { area: 'playground', allows: 'list, read and download files' },
  'files.write': { area: 'playground', allows: 'upload and delete files' },
  'jobs.read': { area: 'playground', allows: 'poll video generation jobs, batches and request outcomes' },
  'batches.write': { area: 'playground', allows: 'create and cancel batches (their lines spend credits)', deniedCode: 'role_cannot_use_models' },
  'api_keys.read': { area: 'api_keys', allows: 'see API keys (a developer sees their own)' },
  'api_keys.create': { area: 'api_keys', allows: 'create and revoke their own API keys' },
  'api_keys.manage_all': { area: 'api_keys', allows: "see and revoke everyone's API keys" },
  'admin_keys.manage': { area: 'api_keys', allows: 'create and revoke admin keys for automation' },
  'billing.read': { area: 'billing', allows: 'read the balance, plan, ledger and spend' },
  'billing.manage': { area: 'billing', allows: 'buy credits (top-ups)' },
  'budget_alerts.manage': { area: 'billing', allows: 'list, create and delete budget alerts' },
  'usage.read': { area: 'billing', allows: 'read usage and costs by day, model, key and member' },
  'requests.read': { area: 'billing', allows: "search the request log (everyone's with usage.read, else their own)" },
  'members.read': { area: 'admin_settings', allows: 'see who is in the workspace' },
  'members.manage': { area: 'admin_settings', allows: 'invite, remove and change the roles of members' },
  'settings.read': { area: 'admin_settings', allows: 'read workspace settings (fallback chains)' },
  'settings.manage': { area: 'admin_settings', allows: 'change workspace settings (fallback chains)' },
  'workspace.manage': { area: 'admin_settings', allows: 'rename the workspace, read the audit log' },
} as const satisfies Record<string, PermissionInfo>;

export type Permission = keyof typeof PERMISSIONS;

const READ_ONLY: readonly Permission[] = ['models.read', 'files.read', 'jobs.read', 'settings.read', 'members.read'];

/** The matrix. A Viewer has read-only access; Billing manages money but never spends it on models. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  owner: Object.keys(PERMISSIONS) as Permission[],
  admin: [
    ...READ_ONLY, 'models.use', 'playground.use', 'batches.write', 'files.write', 'api_keys.read', 'api_keys.create', 'api_keys.manage_all',
    'admin_keys.manage', 'budget_alerts.manage', 'usage.read', 'requests.read', 'members.manage', 'settings.manage', 'workspace.manage',
  ],
  developer: [...READ_ONLY, 'models.use', 'playground.use', 'batches.write', 'files.write', 'api_keys.read', 'api_keys.create', 'requests.read'],
  billing: [...READ_ONLY, 'billing.read', 'billing.manage', 'budget_alerts.manage', 'usage.read', 'requests.read'],
  viewer: READ_ONLY,
};

export function can(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role]?.includes(permission) ?? false;
}

export function permissionsOf(role: Role): Permission[] {
  return (Object.keys(PERMISSIONS) as Permission[]).filter((p) => can(role, p));
}

/** The roles that hold `permission`, in the matrix's order (for refusals that say who may). */
export function rolesWith(permission: Permission): Role[] {
  return (Object.keys(ROLE_PERMISSIONS) as Role[]).filter((role) => can(role, permission));
}

export function deniedCode(permission: Permission): string {
  const info: PermissionInfo = PERMISSIONS[permission];
  return info.deniedCode ?? 'insufficient_role';
}

/** The matrix as permission -> roles (what the app and automation read). */
export function permissionMatrix(): Record<Permission, Role[]> {
  return Object.fromEntries((Object.keys(PERMISSIONS) as Permission[]).map((p) => [p, rolesWith(p)])) as Record<Permission, Role[]>;
}

/** Most to least powerful; billing sits below developer because it may not touch keys or the Playground. */
const RANK: Record<Role, number> = { owner: 4, admin: 3, developer: 2, billing: 1, viewer: 0 };

/** The lower of two roles: an API key never has more power than the member who created it. */
export function lowerRole(a: Role, b: Role): Role {
  return RANK[a] <= RANK[b] ? a : b;
}

/** Whether `role` ranks above `other` (a key's role above its creator's is refused). */
export function outranks(role: Role, other: Role): boolean {
  return RANK[role] > RANK[other];
}

/** Whether `actor` may hand out or take away `role` (only an owner makes owners, via transfer). */
export function mayAssign(actor: Role, role: Role): boolean {
  return role !== 'owner' && RANK[actor] >= RANK['admin'] && RANK[actor] >= RANK[role];
}
