/**
 * The workflow code as one bundle for the workers' V8 sandboxes. Bundling (webpack, through the SDK's
 * bundler) takes seconds and leaves ~75 MiB resident in the process that does it, so it happens at build
 * time: `node dist/worker/workflow-bundle.js` (run by scripts/bootstrap.js after tsc, in a process of its
 * own) writes dist/workflow-bundles/<flavour>.js with a manifest of every file that went into it and its
 * hash. A worker loads that file (`workflowBundle: { codePath }`) when every one of those files is still as
 * it was; otherwise (a build that skipped this step, changed sources) it bundles in-process as before.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { BundleOptions, WorkflowBundleOption } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from '../infra/payload-codec';

/** `default`, or `tracing` with Temporal's OpenTelemetry workflow interceptors in the bundle. */
export type BundleFlavour = 'default' | 'tracing';
const FLAVOURS: BundleFlavour[] = ['default', 'tracing'];

const BUNDLE_DIR = path.join(__dirname, '..', 'workflow-bundles');

interface Manifest {
  /** The SDK that bundled it (the sandbox runtime inside the bundle must match the worker's). */
  sdk: string;
  /** Every file the bundle was built from, relative to BUNDLE_DIR, with its sha256. */
  inputs: Record<string, string>;
}

function bundleOptions(flavour: BundleFlavour): BundleOptions {
  const workflowsPath = require.resolve(path.join(__dirname, '..', 'workflows'));
  return {
    workflowsPath,
    // Our workflow modules keep no state of their own (their activity and sink proxies find the running
    // workflow when called): evaluated once per workflow thread and shared, instead of once per workflow.
    preloadModules: [workflowsPath],
    // Workflow code writes its failures with the same converter as the worker (see infra/failure-converter.ts).
    failureConverterPath: FAILURE_CONVERTER_PATH,
    workflowInterceptorModules: flavour === 'tracing' ? [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')] : [],
    logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: (m) => console.warn(m), error: (m) => console.error(m) },
  };
}

const sdkVersion = (): string => (require('@temporalio/worker/package.json') as { version: string }).version;
const paths = (flavour: BundleFlavour) => ({ code: path.join(BUNDLE_DIR, `${flavour}.js`), manifest: path.join(BUNDLE_DIR, `${flavour}.manifest.json`) });
const sha256 = (file: string): string | null => {
  try {
    return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return null;
  }
};

/** Whether the prebuilt bundle of `flavour` exists and was built from the files as they are now. */
export function prebuiltIsCurrent(flavour: BundleFlavour): boolean {
  const { code, manifest } = paths(flavour);
  let parsed: Manifest;
  try {
    parsed = JSON.parse(fs.readFileSync(manifest, 'utf8')) as Manifest;
  } catch {
    return false;
  }
  if (parsed.sdk !== sdkVersion() || !fs.existsSync(code) || Object.keys(parsed.inputs).length === 0) return false;
  return Object.entries(parsed.inputs).every(([file, hash]) => sha256(path.resolve(BUNDLE_DIR, file)) === hash);
}

/** Bundles `flavour` in this process, returning the code and the files it was built from. */
async function bundle(flavour: BundleFlavour): Promise<{ code: string; inputs: string[] }> {
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const inputs: string[] = [];
  const { code } = await bundleWorkflowCode({
    ...bundleOptions(flavour),
    webpackConfigHook: (config) => ({
      ...config,
      plugins: [...(config.plugins ?? []), {
        apply: (compiler) => compiler.hooks.done.tap('workflow-bundle-inputs', (stats) => { inputs.push(...stats.compilation.fileDependencies); }),
      }],
    }),
  });
  // The SDK's generated entry point lives in memory, not on disk: only real files are inputs. Sources and
  // source maps only feed the bundle's source map, and an image that ships dist/ alone has none of them.
  const isCode = (f: string) => /\.(c|m)?js$|\.json$/.test(f) && path.isAbsolute(f) && fs.existsSync(f) && fs.statSync(f).isFile();
  // This file too: it holds the bundler's options.
  return { code, inputs: [...inputs.filter(isCode), __filename] };
}

/** Writes the bundle of `flavour` and its manifest (the manifest last: a half-written build never matches). */
export async function buildPrebuilt(flavour: BundleFlavour): Promise<void> {
  const { code, inputs } = await bundle(flavour);
  const target = paths(flavour);
  fs.mkdirSync(BUNDLE_DIR, { recursive: true });
  fs.rmSync(target.manifest, { force: true });
  fs.writeFileSync(target.code, code);
  const manifest: Manifest = { sdk: sdkVersion(), inputs: Object.fromEntries(inputs.sort().map((f) => [path.relative(BUNDLE_DIR, f), sha256(f)!])) };
  fs.writeFileSync(target.manifest, `${JSON.stringify(manifest, null, 1)}\n`);
}

const loaded = new Map<BundleFlavour, Promise<WorkflowBundleOption>>();

/**
 * The bundle a worker of this process runs: the prebuilt file when current, else built here once per
 * flavour and shared by every worker the process creates.
 */
export function workflowBundle(flavour: BundleFlavour = 'default'): Promise<WorkflowBundleOption> {
  let found = loaded.get(flavour);
  if (!found) {
    found = prebuiltIsCurrent(flavour) ? Promise.resolve({ codePath: paths(flavour).code }) : bundle(flavour).then(({ code }) => ({ code }));
    loaded.set(flavour, found);
  }
  return found;
}

/** Build step: (re)builds every flavour whose prebuilt bundle is missing or stale. */
async function main(): Promise<void> {
  for (const flavour of FLAVOURS) {
    if (prebuiltIsCurrent(flavour)) continue;
    const started = Date.now();
    await buildPrebuilt(flavour);
    process.stderr.write(`[bootstrap] workflow bundle '${flavour}' built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
