/**
 * Finds or builds the Go binaries the local stack runs. No prebuilt binary can be downloaded here, so a
 * missing tool is built from its Go module into the project's gitignored cache (minutes on first use).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface GoTool {
  name: string;
  /** Env var that points at an existing binary (the user's own). */
  envVar: string;
  /** `go install` target, pinned. */
  module: string;
  /** The name `go install` gives the binary (the package's last path element), when it is not `name`. */
  installs?: string;
}

export const TEMPORAL_CLI: GoTool = {
  name: 'temporal',
  envVar: 'TEMPORAL_CLI_PATH',
  // Newer tags carry a go.mod `replace`, which `go install` refuses.
  module: 'github.com/temporalio/cli/cmd/temporal@v1.5.1',
};

export const MINIO: GoTool = {
  name: 'minio',
  envVar: 'MINIO_PATH',
  // The module proxy serves MinIO's RELEASE.* tags only as this pseudo-version (commit 7aac2a2c5b7c).
  module: 'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c',
};

/** Renders and lints the Helm chart in deploy/helm (test/deploy/helm-chart.test.ts). */
export const HELM: GoTool = {
  name: 'helm',
  envVar: 'HELM_PATH',
  module: 'helm.sh/helm/v3/cmd/helm@v3.22.0',
};

/** Validates rendered manifests against the Kubernetes JSON schemas vendored in deploy/schemas/kubernetes. */
export const KUBECONFORM: GoTool = {
  name: 'kubeconform',
  envVar: 'KUBECONFORM_PATH',
  module: 'github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0',
};

/** Stripe's own mock of its API (tests point the payments client at it: STRIPE_API_BASE). */
export const STRIPE_MOCK: GoTool = {
  name: 'stripe-mock',
  envVar: 'STRIPE_MOCK_PATH',
  module: 'github.com/stripe/stripe-mock@v0.203.0',
};

/** The Temporal server (frontend, history, matching and worker services) for the production-shaped local cluster. */
export const TEMPORAL_SERVER: GoTool = {
  name: 'temporal-server',
  envVar: 'TEMPORAL_SERVER_PATH',
  // Later patch releases ask for a newer Go toolchain than the one the project expects.
  module: 'go.temporal.io/server/cmd/server@v1.32.0',
  installs: 'server',
};

/** The Temporal server's SQL schema tool (setup-schema, update-schema), from the same module. */
export const TEMPORAL_SQL_TOOL: GoTool = {
  name: 'temporal-sql-tool',
  envVar: 'TEMPORAL_SQL_TOOL_PATH',
  module: 'go.temporal.io/server/cmd/tools/sql@v1.32.0',
  installs: 'sql',
};

/** The Temporal Web UI server (the same UI the CLI's dev server embeds), pointed at the cluster. */
export const TEMPORAL_UI_SERVER: GoTool = {
  name: 'temporal-ui-server',
  envVar: 'TEMPORAL_UI_SERVER_PATH',
  // The version the CLI above embeds.
  module: 'github.com/temporalio/ui-server/v2/cmd/server@v2.42.1',
  installs: 'server',
};

/** Where the Go module cache keeps `module@version`'s files (the Temporal server's schema files, say). */
export function goModuleDir(modulePath: string, version: string): string {
  const go = findGo();
  if (!go) throw new Error(`Go is needed to find ${modulePath}@${version} in the module cache`);
  const cache = execFileSync(go, ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  // The module cache spells upper-case letters as '!' + lower case.
  const dir = path.join(cache, `${modulePath.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`)}@${version}`);
  if (!fs.existsSync(dir)) {
    execFileSync(go, ['mod', 'download', `${modulePath}@${version}`], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, GOFLAGS: process.env.GOFLAGS ?? '-buildvcs=false' } });
  }
  return dir;
}

function findGo(): string {
  return spawnSync('bash', ['-c', 'command -v go || ls /usr/local/go/bin/go 2>/dev/null'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
}

export function ensureGoTool(tool: GoTool, cacheDir: string, log: (line: string) => void = console.log): string {
  const fromEnv = process.env[tool.envVar];
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`${tool.envVar}=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  const cached = path.join(cacheDir, 'bin', tool.name);
  if (isExecutable(cached)) return cached;
  const onPath = spawnSync('bash', ['-c', `command -v ${tool.name}`], { encoding: 'utf8' }).stdout.trim();
  if (onPath && isExecutable(onPath)) return onPath;

  const go = findGo();
  if (!go) throw new Error(`${tool.name} not found: set ${tool.envVar}, put it on PATH, or install Go so the project can build it`);
  log(`[stack] building ${tool.name} from ${tool.module} into ${path.dirname(cached)} (first run only; this takes a few minutes)`);
  fs.mkdirSync(path.dirname(cached), { recursive: true });
  const started = Date.now();
  // A tool whose package is named generically (`server`, `sql`) is built aside and renamed, so it never overwrites another.
  const gobin = tool.installs ? fs.mkdtempSync(path.join(path.dirname(cached), `.${tool.name}-`)) : path.dirname(cached);
  execFileSync(go, ['install', tool.module], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GOBIN: gobin, GOFLAGS: process.env.GOFLAGS ?? '-buildvcs=false' },
  });
  if (tool.installs) {
    fs.renameSync(path.join(gobin, tool.installs), cached);
    fs.rmSync(gobin, { recursive: true, force: true });
  }
  log(`[stack] built ${tool.name} in ${Math.round((Date.now() - started) / 1000)} s`);
  return cached;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
