#!/usr/bin/env node
/*
 * Entry point of every npm script: makes a fresh clone runnable with no other step. It installs the
 * dependencies when they are missing or stale, compiles the TypeScript (incrementally), builds the web
 * app and the workflow bundle when they changed, then runs the requested command from dist/. Plain JavaScript on purpose: it runs before anything is installed.
 */
'use strict';
const { execSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const commands = {
  start: 'dist/main/start.js',
  test: 'dist/scripts/test.js',
  api: 'dist/main/api.js',
  worker: 'dist/main/worker.js',
  'api-worker': 'dist/main/api-worker.js',
  cli: 'dist/cli/gateway.js',
  bench: 'dist/bench/run.js',
  'record-histories': 'dist/scripts/record-histories.js',
  cluster: 'dist/main/cluster.js',
};

/**
 * How a gateway process runs (start, api, worker, api-worker, and the bench's gateway, bench/run.ts): Node
 * and allocator settings that lower its resident memory without costing throughput (bench/README.md
 * "Memory"), and the preload that spares the workflow sandbox a watchdog thread per call and a stack per
 * promise. They must be in place when the process starts, so these commands run in a child process.
 */
const GATEWAY_MEMORY_FLAGS = ['--max-old-space-size=512', '--max-semi-space-size=8'];
/** The workflow sandbox without a watchdog thread per call nor a stack per promise (worker/sandbox-preload.ts; bench/README.md). */
const GATEWAY_PRELOAD_FLAGS = ['--require', path.join(root, 'dist', 'worker', 'sandbox-preload.js')];
const GATEWAY_NODE_FLAGS = [...GATEWAY_MEMORY_FLAGS, ...GATEWAY_PRELOAD_FLAGS];
const GATEWAY_ENV = { MALLOC_ARENA_MAX: '2' };
const GATEWAY_COMMANDS = new Set(['start', 'api', 'worker', 'api-worker']);

function say(line) {
  process.stderr.write(`[bootstrap] ${line}\n`);
}

function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    say(`Node ${process.versions.node} is too old: 20.19 or newer is needed.`);
    process.exit(1);
  }
}

function ensureDependencies() {
  const lock = path.join(root, 'package-lock.json');
  const installed = path.join(root, 'node_modules', '.package-lock.json');
  const stale = !fs.existsSync(installed) || fs.statSync(lock).mtimeMs > fs.statSync(installed).mtimeMs;
  if (!stale) return;
  say('installing dependencies (npm install, versions pinned by package-lock.json) ...');
  // Not `npm ci`: registries that do not serve every platform's optional binaries (e.g. a local mirror)
  // leave those out of the lock file, which `npm ci` refuses while `npm install` still honours the pins.
  execSync('npm install --no-audit --no-fund', { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}

function build() {
  say('compiling TypeScript ...');
  execSync(`"${process.execPath}" "${path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')}" -p tsconfig.json`, { cwd: root, stdio: 'inherit' });
  removeStaleOutputs(path.join(root, 'dist'));
}

/** Newest modification time of the files under `dir` (recursively). */
function newestMtime(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * The web app (web/, React + Vite) is type-checked and built into web/dist, which the API serves at `/`.
 * Skipped when the build is newer than every source file and the lock file.
 */
function buildWeb() {
  const web = path.join(root, 'web');
  const built = path.join(web, 'dist', 'index.html');
  const sources = Math.max(newestMtime(path.join(web, 'src')), ...['index.html', 'vite.config.mts', 'tsconfig.json'].map((f) => fs.statSync(path.join(web, f)).mtimeMs), fs.statSync(path.join(root, 'package-lock.json')).mtimeMs);
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs > sources) return;
  say('building the web app (vite) ...');
  execSync(`"${process.execPath}" "${path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')}" -p web/tsconfig.json`, { cwd: root, stdio: 'inherit' });
  execSync(`"${process.execPath}" "${path.join(root, 'node_modules', 'vite', 'bin', 'vite.js')}" build --config web/vite.config.mts --logLevel warn`, {
    cwd: root, stdio: 'inherit', env: { ...process.env, VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' },
  });
}

/**
 * The workflow bundle the workers load (worker/workflow-bundle.ts), rebuilt only when a file it was built
 * from changed. In a process of its own: webpack's memory never lands in the gateway's process.
 */
function buildWorkflowBundles() {
  execSync(`"${process.execPath}" "${path.join(root, 'dist', 'worker', 'workflow-bundle.js')}"`, { cwd: root, stdio: 'inherit' });
}

/** Compiled files whose source was moved or deleted (tsc never removes them; stale tests would still run). */
function removeStaleOutputs(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      // Built from the compiled files, not from a source of the same name (buildWorkflowBundles).
      if (full === path.join(root, 'dist', 'workflow-bundles')) continue;
      removeStaleOutputs(full);
      if (fs.readdirSync(full).length === 0) fs.rmdirSync(full);
      continue;
    }
    const match = /^(.*)\.js(\.map)?$/.exec(entry.name);
    if (!match) continue;
    const source = path.join(root, path.relative(path.join(root, 'dist'), dir), `${match[1]}.ts`);
    if (!fs.existsSync(source)) fs.rmSync(full);
  }
}

function main() {
  checkNode();
  const name = process.argv[2];
  const target = commands[name];
  if (!target) {
    say(`unknown command '${name}'; one of: ${Object.keys(commands).join(', ')}`);
    process.exit(2);
  }
  ensureDependencies();
  if (process.env.GATEWAY_SKIP_BUILD !== '1') {
    build();
    if (name === 'start' || name === 'test' || name === 'api' || name === 'api-worker' || name === 'cluster') buildWeb();
    if (name === 'start' || name === 'test' || name === 'worker' || name === 'api-worker' || name === 'bench' || name === 'record-histories' || name === 'cluster') buildWorkflowBundles();
  }
  if (GATEWAY_COMMANDS.has(name)) {
    runGateway(target, process.argv.slice(3));
    return;
  }
  process.argv.splice(2, 1);
  require(path.join(root, target));
}

/** Runs a gateway process with its settings, passing Ctrl-C and SIGTERM on and exiting as it does. */
function runGateway(target, args) {
  const child = spawn(process.execPath, [...GATEWAY_NODE_FLAGS, path.join(root, target), ...args], {
    cwd: process.cwd(), stdio: 'inherit', env: { ...process.env, ...GATEWAY_ENV },
  });
  // Passed on even when the child had it already (Ctrl-C reaches the whole process group): it stops once.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

// Exported before main() runs: the bench, required by main(), reads the gateway's settings from here.
module.exports = { ensureDependencies, build, buildWeb, buildWorkflowBundles, GATEWAY_NODE_FLAGS, GATEWAY_MEMORY_FLAGS, GATEWAY_PRELOAD_FLAGS, GATEWAY_ENV };
if (require.main === module) main();
