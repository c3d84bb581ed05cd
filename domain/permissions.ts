/**
 * Who may do what in a workspace, as data: the five roles over the product's four areas (Playground, API
 * keys, billing, admin settings). One guard (api/http/permissions.ts) checks it on every route, whatever
 * the caller's credential: an API key today (its role is set when the key is created), a member's session
 * in the web app later. README.md shows the same table (a test keeps the two in step).
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
  'files.read': { area: 'playground', allows: 'list, read and download files' },
  'files.write': { area: 'playground', allows: 'upload and delete files' },
  'jobs.read': { area: 'playground', allows: 'poll video generation jobs' },
  'api_keys.read': { area: 'api_keys', allows: "see the workspace's API keys" },
  'api_keys.manage': { area: 'api_keys', allows: 'create and revoke API keys' },
  'billing.read': { area: 'billing', allows: 'read the balance, plan and spend' },
  'billing.manage': { area: 'billing', allows: 'buy credits (top-ups)' },
  'budget_alerts.manage': { area: 'billing', allows: 'list, create and delete budget alerts' },
  'settings.read': { area: 'admin_settings', allows: 'read workspace settings (fallback chains)' },
  'settings.manage': { area: 'admin_settings', allows: 'change workspace settings (fallback chains)' },
} as const satisfies Record<string, PermissionInfo>;

export type Permission = keyof typeof PERMISSIONS;

const READ_ONLY: readonly Permission[] = ['models.read', 'files.read', 'jobs.read', 'settings.read'];

/** The matrix. A Viewer has read-only access; Billing manages money but never spends it on models. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  owner: Object.keys(PERMISSIONS) as Permission[],
  admin: [...READ_ONLY, 'models.use', 'files.write', 'api_keys.read', 'api_keys.manage', 'budget_alerts.manage', 'settings.manage'],
  developer: [...READ_ONLY, 'models.use', 'files.write', 'api_keys.read'],
  billing: [...READ_ONLY, 'billing.read', 'billing.manage', 'budget_alerts.manage'],
  viewer: READ_ONLY,
};

export function can(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role]?.includes(permission) ?? false;
}

/** The roles that hold `permission`, in the matrix's order (for refusals that say who may). */
export function rolesWith(permission: Permission): Role[] {
  return (Object.keys(ROLE_PERMISSIONS) as Role[]).filter((role) => can(role, permission));
}

export function deniedCode(permission: Permission): string {
  const info: PermissionInfo = PERMISSIONS[permission];
  return info.deniedCode ?? 'insufficient_role';
}
