/**
 * `npm test`: builds the stack's Go tools if missing (so no test times out on a first build), then runs
 * the whole mocha suite. Tests start the real stack themselves (test/support/stack.ts) and stop it.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { loadConfig } from '../config/env';
import { repoRoot } from '../core/paths';
import { ensureGoTool, MINIO, TEMPORAL_CLI } from '../stack/go-tools';

const config = loadConfig();
ensureGoTool(TEMPORAL_CLI, config.cacheDir);
ensureGoTool(MINIO, config.cacheDir);

const mocha = path.join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js');
const result = spawnSync(process.execPath, [mocha, ...process.argv.slice(2)], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: { NODE_ENV: 'test', ...process.env },
});
process.exit(result.status ?? 1);
