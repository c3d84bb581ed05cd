/**
 * The admin CLI (`npx gateway ...`): talks to Postgres directly, finding the same database as `npm start`
 * with no flags. Prints JSON on stdout; errors go to stderr with a non-zero exit.
 */
import type { Knex } from 'knex';
import { loadConfig } from '../config/env';
import { createDb } from '../db/connection';
import { GatewayError } from '../core/errors';
import { getBalance } from '../domain/ledger';
import { addOperatorCredits } from '../domain/payments';
import { creditsToMicro, microToCredits } from '../core/money';
import { seedCatalog, setModelEnabled, upsertOperatorModel } from '../domain/model-catalog';
import { createApiKey, createWorkspace, getWorkspace, listFallbackChains, revokeApiKey, setFallbackChain, type Role } from '../domain/workspaces';
import { createUser, issueUserToken } from '../domain/accounts';
import { addMember, createWorkspaceWithOwner } from '../domain/members';
import { loadCatalogFiles, validateModelRecord } from '../catalog/load';
import { prepareDatabase } from '../domain/database-setup';
import { devDatabaseUrl } from '../stack/attach';
import { parseFlags, UsageError } from './args';
import { BILLING_COMMANDS } from './billing-commands';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';

type Command = (db: Knex, argv: string[]) => Promise<unknown>;

/**
 * `gateway migrate`: brings the schema up to date (pending knex migrations, then the plans and the catalog)
 * and says what it applied; run before new API and worker processes roll out (the Helm chart's pre-install
 * and pre-upgrade Job). Every other command prepares the database the same way before it runs.
 */
const migrateCommand: Command = async (db, argv) => {
  parseFlags(argv, {});
  const { migrationsApplied } = await prepareDatabase(db);
  const [completed, pending] = (await db.migrate.list()) as [Array<{ name: string }>, unknown[]];
  return { applied: migrationsApplied, current: completed.at(-1)?.name ?? null, migrations: completed.length, pending: pending.length };
};

/** --credits as micro-credits: a positive amount with at most 6 decimals. */
function positiveMicro(credits: number): number {
  let amount = 0;
  try {
    amount = creditsToMicro(credits);
  } catch {
    // more than 6 decimals: refused below
  }
  if (amount <= 0) throw new UsageError('--credits must be a positive amount with at most 6 decimals');
  return amount;
}

/** Who runs the command, for the audit log: --operator, else GATEWAY_OPERATOR, else the local user. */
function operatorName(flag: unknown): string {
  return (flag as string | undefined) ?? process.env.GATEWAY_OPERATOR ?? `cli:${os.userInfo().username}`;
}

const COMMANDS: Record<string, Command> = {
  migrate: migrateCommand,
  'workspace create': async (db, argv) => {
    const f = parseFlags(argv, {
      name: { type: 'string', required: true }, credits: { type: 'number' }, plan: { type: 'string' }, reason: { type: 'string' }, operator: { type: 'string' },
    });
    const initial = f.credits === undefined ? 0 : positiveMicro(f.credits as number);
    const ws = await createWorkspace(db, { name: f.name as string, planId: (f.plan as string) ?? null, actor: 'cli' });
    // Starting credits are an operator's grant like any other: audited with who and why.
    if (initial > 0) {
      await addOperatorCredits(db, {
        workspaceId: ws.id, amountMicro: initial, operator: operatorName(f.operator), idempotencyKey: 'initial',
        reason: (f.reason as string | undefined) ?? 'starting credits given when the workspace was created',
      });
    }
    return { id: ws.id, name: ws.name, plan: ws.planId, credits: microToCredits((await getBalance(db, ws.id)).totalMicro) };
  },
  'keys create': async (db, argv) => {
    const f = parseFlags(argv, {
      workspace: { type: 'string', required: true }, name: { type: 'string', required: true }, role: { type: 'string' },
      rpm: { type: 'number' }, 'daily-tokens': { type: 'number' }, models: { type: 'list' }, 'cost-cap': { type: 'number' },
    });
    return createApiKey(db, {
      workspaceId: f.workspace as string, name: f.name as string, role: (f.role as Role) ?? 'developer', actor: 'cli',
      quotas: { rpm: f.rpm as number, dailyTokens: f['daily-tokens'] as number, models: f.models as string[], costCap: f['cost-cap'] as number },
    });
  },
  'keys revoke': async (db, argv) => {
    const f = parseFlags(argv, { 'key-id': { type: 'string', required: true } });
    return revokeApiKey(db, { keyId: f['key-id'] as string, actor: 'cli' });
  },
  'keys list': async (db, argv) => {
    const f = parseFlags(argv, { workspace: { type: 'string', required: true } });
    const rows = await db('api_keys as k')
      .where({ 'k.workspace_id': f.workspace })
      .select('k.*', db.raw('(select coalesce(sum(credits_micro), 0) from usage_records u where u.api_key_id = k.id)::bigint as spent'))
      .orderBy('k.created_at');
    return { data: rows.map((r) => ({
      id: r.id, name: r.name, role: r.role, key_hint: `${r.prefix}…${r.last4}`, rpm_limit: r.rpm_limit, daily_token_limit: r.daily_token_limit,
      allowed_models: r.allowed_models, cost_cap: r.cost_cap_micro === null ? null : microToCredits(r.cost_cap_micro),
      spent: microToCredits(Number(r.spent)), created_at: r.created_at, revoked_at: r.revoked_at,
    })) };
  },
  // Bootstraps the first owner: a verified account, owner of a new (or an existing) workspace. Without
  // --password, it prints a one-time link to choose one (valid for an hour).
  'users create-owner': async (db, argv) => {
    const f = parseFlags(argv, { email: { type: 'string', required: true }, workspace: { type: 'string', required: true }, name: { type: 'string' }, password: { type: 'string' }, plan: { type: 'string' } });
    const password = (f.password as string | undefined) ?? randomBytes(24).toString('base64url');
    const user = await createUser(db, { email: f.email as string, password, name: f.name as string | undefined, verified: true, actor: 'cli' });
    const existing = /^ws_/.test(f.workspace as string) ? await getWorkspace(db, f.workspace as string) : null;
    const workspace = existing ?? await createWorkspaceWithOwner(db, { name: f.workspace as string, userId: user.id, planId: (f.plan as string) ?? null });
    if (existing) await addMember(db, { workspaceId: existing.id, userId: user.id, role: 'owner', actor: 'cli' });
    const base = loadConfig().publicUrl ?? `http://${loadConfig().host}:${loadConfig().port}`;
    return {
      user: { id: user.id, email: user.email }, workspace: { id: workspace.id, name: workspace.name }, role: 'owner',
      ...(f.password ? {} : { set_password_url: `${base}/reset?token=${await issueUserToken(db, user.id, 'reset_password')}` }),
    };
  },
  // Credits added by hand (no payment processor, a goodwill grant): audited with who and why.
  'credits add': async (db, argv) => {
    const f = parseFlags(argv, {
      workspace: { type: 'string', required: true }, credits: { type: 'number', required: true }, reason: { type: 'string', required: true },
      operator: { type: 'string' }, 'idempotency-key': { type: 'string' },
    });
    const amount = positiveMicro(f.credits as number);
    const operator = operatorName(f.operator);
    const key = (f['idempotency-key'] as string) ?? randomUUID();
    const { applied } = await addOperatorCredits(db, { workspaceId: f.workspace as string, amountMicro: amount, operator, reason: f.reason as string, idempotencyKey: key });
    const balance = await getBalance(db, f.workspace as string);
    return { workspace: f.workspace, applied, credits_added: applied ? f.credits : 0, operator, reason: f.reason, balance: microToCredits(balance.totalMicro) };
  },
  'credits balance': async (db, argv) => {
    const f = parseFlags(argv, { workspace: { type: 'string', required: true } });
    const b = await getBalance(db, f.workspace as string);
    return { workspace: f.workspace, balance: microToCredits(b.totalMicro), plan_credits: microToCredits(b.planMicro), topup_credits: microToCredits(b.topupMicro), debt: microToCredits(b.debtMicro) };
  },
  'fallbacks set': async (db, argv) => {
    const f = parseFlags(argv, { workspace: { type: 'string', required: true }, model: { type: 'string', required: true }, chain: { type: 'list', required: true } });
    return setFallbackChain(db, {
      workspaceId: f.workspace as string, sourceModel: f.model as string, chain: f.chain as string[], actor: 'cli',
      modalityOf: async (slug) => (await db('models').where({ slug, enabled: true }).first('modality'))?.modality ?? null,
    });
  },
  'fallbacks list': async (db, argv) => {
    const f = parseFlags(argv, { workspace: { type: 'string', required: true } });
    return { data: await listFallbackChains(db, f.workspace as string) };
  },
  'models upsert': async (db, argv) => {
    const f = parseFlags(argv, { file: { type: 'string', required: true } });
    const parsed = JSON.parse(fs.readFileSync(f.file as string, 'utf8'));
    const records = Array.isArray(parsed) ? parsed : [parsed];
    for (const r of records) await upsertOperatorModel(db, validateModelRecord(r));
    return { upserted: records.map((r: { slug: string }) => r.slug) };
  },
  'models disable': async (db, argv) => {
    const f = parseFlags(argv, { slug: { type: 'string', required: true } });
    if (!(await setModelEnabled(db, f.slug as string, false))) throw new UsageError(`no model '${f.slug}'`);
    return { slug: f.slug, enabled: false };
  },
  'models enable': async (db, argv) => {
    const f = parseFlags(argv, { slug: { type: 'string', required: true } });
    if (!(await setModelEnabled(db, f.slug as string, true))) throw new UsageError(`no model '${f.slug}'`);
    return { slug: f.slug, enabled: true };
  },
  'models reseed': async (db) => seedCatalog(db, loadCatalogFiles()),
  ...BILLING_COMMANDS,
};

function usage(): string {
  return `usage: gateway <command> [flags]\n\ncommands:\n${Object.keys(COMMANDS).map((c) => `  ${c}`).join('\n')}\n\nThe database is DATABASE_URL, else the one \`npm start\` uses.`;
}

async function main(argv: string[]): Promise<number> {
  const twoWords = `${argv[0] ?? ''} ${argv[1] ?? ''}`.trim();
  // Commands are two words (`keys create`) or one (`migrate`).
  const [name, rest] = Object.hasOwn(COMMANDS, twoWords) ? [twoWords, argv.slice(2)] : [argv[0] ?? '', argv.slice(1)];
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`${argv.length ? `unknown command '${twoWords}'\n\n` : ''}${usage()}\n`);
    return 2;
  }
  const config = loadConfig();
  const db = createDb(config.databaseUrl ?? devDatabaseUrl(config.dataDir), { poolMax: 4, applicationName: 'gateway-cli' });
  try {
    if (command !== migrateCommand) await prepareDatabase(db);
    const result = await command(db, rest);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n`);
      return 2;
    }
    if (err instanceof GatewayError) {
      process.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    const code = (err as { code?: string }).code;
    if (code === 'ECONNREFUSED' || code === '3D000') {
      process.stderr.write('error: cannot reach the gateway database. Start the gateway (npm start) or set DATABASE_URL.\n');
      return 1;
    }
    if (code === '23503') {
      process.stderr.write('error: a referenced record does not exist (check the workspace or plan id)\n');
      return 1;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await db.destroy();
  }
}

// main reports its own errors as an exit code; anything else it throws stays an unhandled rejection,
// which Node prints before exiting with status 1.
void main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
