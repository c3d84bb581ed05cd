/**
 * The development workspace `npm start` prepares so that curl works at once. Its key's secret is kept in
 * the (gitignored) data folder, since the database holds only hashes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { hashApiKey } from './api-keys';
import { createApiKey, createWorkspace } from './workspaces';
import { createUser, issueUserToken, userByEmail } from './accounts';
import { addMember, memberRole } from './members';
import { newSecretToken } from './secret-tokens';

export interface DevCredentials {
  workspaceId: string;
  keyId: string;
  key: string;
}

export const DEV_OWNER_EMAIL = 'dev@gateway.localhost';

/**
 * The development owner of the dev workspace (a verified account), and a one-time sign-in link for it:
 * the link lets the person choose a password (reset flow), since the database keeps only hashes.
 */
export async function ensureDevOwner(db: Knex, opts: { workspaceId: string; baseUrl: string }): Promise<{ email: string; signInUrl: string }> {
  const existing = await userByEmail(db, DEV_OWNER_EMAIL);
  const user = existing ?? await createUser(db, { email: DEV_OWNER_EMAIL, name: 'Development owner', password: newSecretToken().token, verified: true, actor: 'npm-start' });
  if (await memberRole(db, opts.workspaceId, user.id) !== 'owner') await addMember(db, { workspaceId: opts.workspaceId, userId: user.id, role: 'owner', actor: 'npm-start' });
  const token = await issueUserToken(db, user.id, 'reset_password');
  return { email: user.email, signInUrl: `${opts.baseUrl}/reset?token=${token}` };
}

export async function ensureDevWorkspace(db: Knex, opts: { dataDir: string; credits: number }): Promise<DevCredentials & { created: boolean }> {
  const file = path.join(opts.dataDir, 'dev-credentials.json');
  if (fs.existsSync(file)) {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as DevCredentials;
    const row = await db('api_keys').where({ key_hash: hashApiKey(saved.key) }).whereNull('revoked_at').first('id');
    if (row) return { ...saved, created: false };
  }
  const workspace = await createWorkspace(db, { name: 'Development', credits: opts.credits, actor: 'npm-start' });
  const key = await createApiKey(db, { workspaceId: workspace.id, name: 'development', role: 'owner', actor: 'npm-start' });
  const creds: DevCredentials = { workspaceId: workspace.id, keyId: key.id, key: key.key };
  fs.mkdirSync(opts.dataDir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(creds, null, 2), { mode: 0o600 });
  return { ...creds, created: true };
}
