import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../core/paths';
import { createDb, MIGRATIONS_DIR } from '../../db/connection';
import { ensurePostgres } from '../../stack/postgres';
import { getSharedStack } from '../support/stack';

interface CliResult { code: number; stdout: string; stderr: string; json: any }

/** Runs the admin CLI as a user would (a separate process), against the test database. */
async function gateway(...args: string[]): Promise<CliResult> {
  return gatewayOn((await getSharedStack()).databaseUrl, ...args);
}

async function gatewayOn(databaseUrl: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'gateway.js'), ...args], {
      cwd: repoRoot, env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('close', (code) => {
      let json: unknown = null;
      try { json = JSON.parse(stdout); } catch { /* not JSON */ }
      resolve({ code: code ?? -1, stdout, stderr, json });
    });
  });
}

describe('admin CLI (gateway)', function () {
  this.timeout(120_000);

  it('bootstraps the first owner of a new workspace, with a link to choose a password', async () => {
    const email = `first.owner.${Date.now()}@example.com`;
    const created = await gateway('users', 'create-owner', '--email', email, '--workspace', 'Acme Corp', '--plan', 'pro');
    expect(created.code, created.stderr).to.equal(0);
    expect(created.json).to.deep.include({ role: 'owner', user: { id: created.json.user.id, email } });
    expect(created.json.workspace.name).to.equal('Acme Corp');
    expect(created.json.set_password_url).to.match(/\/reset\?token=[A-Za-z0-9_-]{43}$/);
    const again = await gateway('users', 'create-owner', '--email', email, '--workspace', created.json.workspace.id);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.match(/already exists/);
  });

  it('creates a workspace with credits, a key with quotas, tops up and reports the balance', async () => {
    const ws = await gateway('workspace', 'create', '--name', 'Acme', '--credits', '12.5', '--operator', 'ada', '--reason', 'pilot agreement');
    expect(ws.code, ws.stderr).to.equal(0);
    expect(ws.json.id).to.match(/^ws_/);
    expect(ws.json.credits).to.equal(12.5);

    const key = await gateway('keys', 'create', '--workspace', ws.json.id, '--name', 'ci', '--rpm', '60', '--daily-tokens', '1000', '--models', 'sim-chat,sim-embed', '--cost-cap', '5');
    expect(key.code, key.stderr).to.equal(0);
    expect(key.json.key).to.match(/^sk-gw-[0-9A-Za-z]{43}$/);
    expect(key.json).to.include({ rpm_limit: 60, daily_token_limit: 1000, cost_cap: 5 });
    expect(key.json.allowed_models).to.deep.equal(['sim-chat', 'sim-embed']);

    const topup = await gateway('credits', 'add', '--workspace', ws.json.id, '--credits', '7.5', '--reason', 'invoice 1 paid', '--operator', 'ada', '--idempotency-key', 'invoice-1');
    expect(topup.code, topup.stderr).to.equal(0);
    expect(topup.json).to.include({ applied: true, balance: 20, operator: 'ada', reason: 'invoice 1 paid' });
    const again = await gateway('credits', 'add', '--workspace', ws.json.id, '--credits', '7.5', '--reason', 'invoice 1 paid', '--operator', 'ada', '--idempotency-key', 'invoice-1');
    expect(again.json).to.include({ applied: false, balance: 20 });
    const db = createDb((await getSharedStack()).databaseUrl, { poolMax: 1, applicationName: 'gateway-cli-test' });
    try {
      const audit = await db('audit_log').where({ workspace_id: ws.json.id, action: 'credits.operator_add' }).orderBy('id').select('actor', 'data');
      expect(audit).to.deep.equal([
        { actor: 'operator:ada', data: { credits: 12.5, reason: 'pilot agreement', idempotencyKey: 'initial' } },
        { actor: 'operator:ada', data: { credits: 7.5, reason: 'invoice 1 paid', idempotencyKey: 'invoice-1' } },
      ]);
    } finally {
      await db.destroy();
    }
    const noReason = await gateway('credits', 'add', '--workspace', ws.json.id, '--credits', '1');
    expect(noReason.code).to.equal(2);
    expect(noReason.stderr).to.contain('--reason is required');
    const byUser = await gateway('credits', 'add', '--workspace', ws.json.id, '--credits', '0.5', '--reason', 'goodwill');
    expect(byUser.json.operator).to.match(/^cli:/);
    const balance = await gateway('credits', 'balance', '--workspace', ws.json.id);
    expect(balance.json).to.include({ balance: 20.5, topup_credits: 20.5 });

    const list = await gateway('keys', 'list', '--workspace', ws.json.id);
    expect(list.json.data[0].key_hint).to.match(/^sk-gw-…/);
    expect(JSON.stringify(list.json)).not.to.contain(key.json.key);

    const revoked = await gateway('keys', 'revoke', '--key-id', key.json.id);
    expect(revoked.code).to.equal(0);
    expect(revoked.json.revoked_at).to.be.a('string');
  });

  it('sets fallback chains, refusing unknown models', async () => {
    const ws = await gateway('workspace', 'create', '--name', 'Chains');
    const set = await gateway('fallbacks', 'set', '--workspace', ws.json.id, '--model', 'sim-chat', '--chain', 'sim-chat-mini,sim-chat-slow');
    expect(set.json).to.deep.equal({ model: 'sim-chat', chain: ['sim-chat-mini', 'sim-chat-slow'] });
    const bad = await gateway('fallbacks', 'set', '--workspace', ws.json.id, '--model', 'sim-chat', '--chain', 'nope');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain("Unknown model 'nope'");
  });

  it('migrates a fresh database (every migration, the plans and the catalog), then reports nothing left to apply', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-migrate-'));
    const pg = await ensurePostgres({ dbName: `gateway_migrate_${process.pid}_${Date.now()}`, dataDir, dropOnStop: true, log: () => undefined });
    try {
      const migrationFiles = fs.readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.js')).sort();
      const first = await gatewayOn(pg.url, 'migrate');
      expect(first.code, first.stderr).to.equal(0);
      expect(first.json).to.deep.equal({ applied: migrationFiles, current: migrationFiles.at(-1), migrations: migrationFiles.length, pending: 0 });
      const db = createDb(pg.url, { poolMax: 1 });
      try {
        expect(Number((await db('plans').count<{ count: string }[]>('* as count'))[0].count), 'plans seeded').to.be.greaterThan(0);
        expect(Number((await db('models').where({ slug: 'sim-chat' }).count<{ count: string }[]>('* as count'))[0].count), 'catalog seeded').to.equal(1);
      } finally {
        await db.destroy();
      }
      const again = await gatewayOn(pg.url, 'migrate');
      expect(again.code, again.stderr).to.equal(0);
      expect(again.json).to.deep.include({ applied: [], pending: 0, migrations: migrationFiles.length });
      const badFlag = await gatewayOn(pg.url, 'migrate', '--to', 'x');
      expect(badFlag.code).to.equal(2);
      expect(badFlag.stderr).to.contain('unknown flag --to');
    } finally {
      await pg.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('exits non-zero with a clear message on bad arguments', async () => {
    const missing = await gateway('keys', 'create', '--workspace', 'ws_x');
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain('--name is required');
    const unknownFlag = await gateway('workspace', 'create', '--name', 'x', '--colour', 'red');
    expect(unknownFlag.code).to.equal(2);
    expect(unknownFlag.stderr).to.contain('unknown flag --colour');
    const notNumber = await gateway('credits', 'add', '--workspace', 'ws_x', '--credits', 'lots', '--reason', 'r');
    expect(notNumber.code).to.equal(2);
    const unknownCommand = await gateway('frobnicate');
    expect(unknownCommand.code).to.equal(2);
    expect(unknownCommand.stderr).to.contain('usage: gateway');
    const noWorkspace = await gateway('keys', 'create', '--workspace', 'ws_missing', '--name', 'k');
    expect(noWorkspace.code).to.equal(1);
    expect(noWorkspace.stderr).to.contain("No workspace 'ws_missing'");
  });
});
