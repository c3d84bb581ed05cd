/**
 * `npm test`: lints the tree (eslint.config.mjs: promises, layer boundaries, the workflow sandbox) and
 * stops on any error, builds the stack's Go tools if missing (so no test times out on a first build),
 * then runs the whole mocha suite. Tests start the real stack themselves (test/support/stack.ts) and stop
 * it. GATEWAY_SKIP_LINT=1 skips the lint step (e.g. when running one test file).
 * `npm run test:faults` (`--faults`) runs the fault suite (test/faults) instead, on a stack of its own;
 * `npm run test:cluster` (`--cluster`) the cluster suite (test/cluster): the Temporal server on Postgres, two APIs, two workers.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { loadConfig } from '../config/env';
import { repoRoot } from '../core/paths';
import { ensureGoTool, HELM, KUBECONFORM, MINIO, STRIPE_MOCK, TEMPORAL_CLI, TEMPORAL_SERVER, TEMPORAL_SQL_TOOL } from '../stack/go-tools';

const suite = process.argv[2] === '--faults' ? 'faults' : process.argv[2] === '--cluster' ? 'cluster' : null;
if (process.env.GATEWAY_SKIP_LINT !== '1' && !suite) {
  const eslint = path.join(repoRoot, 'node_modules', 'eslint', 'bin', 'eslint.js');
  const started = Date.now();
  process.stderr.write('[test] linting (eslint) ...\n');
  const lint = spawnSync(process.execPath, [eslint, '.'], { cwd: repoRoot, stdio: 'inherit' });
  if (lint.status !== 0) {
    process.stderr.write('[test] lint failed: fix the errors above (`npm run lint` runs it alone)\n');
    process.exit(lint.status ?? 1);
  }
  process.stderr.write(`[test] lint passed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

const config = loadConfig();
ensureGoTool(TEMPORAL_CLI, config.cacheDir);
ensureGoTool(MINIO, config.cacheDir);
if (!suite) {
  ensureGoTool(HELM, config.cacheDir);
  ensureGoTool(KUBECONFORM, config.cacheDir);
  ensureGoTool(STRIPE_MOCK, config.cacheDir);
}
if (suite === 'cluster') {
  ensureGoTool(TEMPORAL_SERVER, config.cacheDir);
  ensureGoTool(TEMPORAL_SQL_TOOL, config.cacheDir);
}

const mocha = path.join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js');
const args = suite
  ? ['--no-config', '--require', 'dist/test/support/root-hooks.js', '--timeout', '60000', '--exit', `dist/test/${suite}/**/*.test.js`, ...process.argv.slice(3)]
  : withOnlyNamedFiles(process.argv.slice(2));

/**
 * Mocha adds test files named on its command line to the `spec` of .mocharc.json instead of replacing it, so
 * `npm test -- dist/test/x.test.js` would run the whole suite: with files named, the config's other settings
 * are passed by hand and its spec left out.
 */
function withOnlyNamedFiles(argv: string[]): string[] {
  if (!argv.some((arg) => arg.endsWith('.js'))) return argv;
  return ['--no-config', '--require', 'dist/test/support/root-hooks.js', '--timeout', '60000', '--slow', '2000', '--exit', ...argv];
}
const result = spawnSync(process.execPath, [mocha, ...args], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: { NODE_ENV: 'test', ...process.env },
});
process.exit(result.status ?? 1);
