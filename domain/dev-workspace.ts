/**
 * The development workspace `npm start` prepares so that curl works at once. Its key's secret is kept in
 * the (gitignored) data folder, since the database holds only hashes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { hashApiKey } from './api-keys';
import { createApiKey, createWorkspace } from './workspaces';

export interface DevCredentials {
  workspaceId: string;
  keyId: string;
  key: string;
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
