/**
 * `npm test`: builds the stack's Go tools if missing (so no test times out on a first build), then runs
 * the whole mocha suite. Tests start the real stack themselves (test/support/stack.ts) and stop it.
 * `npm run test:faults` (`--faults`) runs the fault suite (test/faults) instead, on a stack of its own.
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
const args = process.argv[2] === '--faults'
  ? ['--no-config', '--require', 'dist/test/support/root-hooks.js', '--timeout', '60000', '--exit', 'dist/test/faults/**/*.test.js', ...process.argv.slice(3)]
  : process.argv.slice(2);
const result = spawnSync(process.execPath, [mocha, ...args], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: { NODE_ENV: 'test', ...process.env },
});
process.exit(result.status ?? 1);
