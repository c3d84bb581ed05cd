// ESLint (flat config): promise handling with type information, layer boundaries between our top-level
// folders, and the workflow sandbox's import limits. `npm run lint`; `npm test` runs it before mocha.
import { builtinModules } from 'node:module';
import boundaries from 'eslint-plugin-boundaries';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/**
 * The layers, lowest first, and the folders each may import (relative imports between our own top-level
 * folders). Anything not listed is refused: an upward import, a sideways one, or any import of simulator/
 * from a layer. main/, cli/, scripts/, bench/ and test/ sit on top and may import anything.
 */
const LAYERS = {
  core: [],
  config: ['core'],
  infra: ['core', 'config'],
  db: ['core'],
  catalog: ['core'],
  providers: ['core'],
  simulator: ['core', 'providers'],
  stack: ['core', 'config', 'infra'],
  domain: ['core', 'config', 'infra', 'db', 'catalog', 'providers'],
  endpoints: ['core', 'config', 'infra', 'db', 'catalog', 'providers', 'domain'],
  activities: ['core', 'config', 'infra', 'db', 'catalog', 'providers', 'domain', 'endpoints'],
  // Workflow code runs in Temporal's sandbox: from activities/ and endpoints/ it takes types only.
  workflows: ['core', 'catalog', 'providers', 'domain', { types: ['endpoints', 'activities'] }],
  worker: ['core', 'config', 'infra', 'db', 'catalog', 'providers', 'domain', 'endpoints', 'activities', 'workflows'],
  api: ['core', 'config', 'infra', 'db', 'catalog', 'providers', 'domain', 'endpoints', 'activities', 'workflows', 'worker'],
};
const TOP = ['main', 'cli', 'scripts', 'bench', 'test'];
/** SDK-free workflow ids, signal names and search attribute keys: any layer may import this one file. */
const CONTRACTS = 'workflows/contracts.ts';
/** The failure policy's pure half (typed errors <-> ApplicationFailure, "may this fall back"): workflows read it too. */
const FAILURE_POLICY = 'activities/failures.ts';

const layerPolicies = Object.entries(LAYERS).flatMap(([from, allowed]) => {
  const values = allowed.filter((entry) => typeof entry === 'string');
  const typeOnly = allowed.flatMap((entry) => (typeof entry === 'string' ? [] : entry.types));
  const policies = [];
  if (values.length > 0) {
    policies.push({ from: { element: { type: from } }, allow: { to: { element: { type: values } } } });
  }
  if (typeOnly.length > 0) {
    policies.push({
      from: { element: { type: from } },
      allow: { to: { element: { type: typeOnly } }, dependency: { kind: 'type' } },
    });
  }
  return policies;
});

/** Node's built-in modules by bare name; `node:` specifiers and subpaths (fs/promises ...) go by pattern. */
const BUILTINS = builtinModules.filter((name) => !name.startsWith('_') && !name.includes('/'));
const NO_BUILTINS = 'Workflow code runs in the Temporal sandbox: no Node built-ins (do it in an activity).';
const NO_IO = 'Workflow code does no I/O: databases, storage and network clients belong in activities.';

export default defineConfig(
  {
    // Build output (ours and any web build's), installed and downloaded files, plain-JS launchers.
    ignores: ['**/dist/**', '**/build/**', 'node_modules/**', '.cache/**', '.data/**', 'bin/**', 'scripts/bootstrap.js'],
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin, boundaries },
    settings: {
      // Relative imports of our .ts sources resolve like Node's resolution with .ts added.
      'import/resolver': { node: { extensions: ['.ts', '.js', '.json'] } },
      'boundaries/elements': [...Object.keys(LAYERS), ...TOP].map((folder) => ({
        type: folder, pattern: folder, partialMatch: false,
      })),
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // Also where a void callback is expected (node:http handlers, event listeners, timers): hand over a
      // function that starts the promise with `void` and says why nothing is lost. Koa and @koa/router
      // declare their middleware as returning promises, so routes need no wrapper.
      '@typescript-eslint/no-misused-promises': 'error',
      // A regex that means to match control characters says so on its own line (providers/http.ts).
      'no-control-regex': 'error',
      'boundaries/dependencies': ['error', {
        default: 'disallow',
        message: '{{from.element.type}}/ may not import {{to.element.type}}/ ({{dependency.source}}): see the layer table in eslint.config.mjs and README "Lint and layers"',
        policies: [
          ...layerPolicies,
          { from: { element: { type: TOP } }, allow: { to: { element: { type: '*' } } } },
          { allow: { to: { file: { path: CONTRACTS } } } },
          { from: { element: { type: 'workflows' } }, allow: { to: { file: { path: FAILURE_POLICY } } } },
        ],
      }],
    },
  },
  {
    // Workflow code is bundled into Temporal's deterministic sandbox: no Node built-ins, no I/O clients.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [
          ...BUILTINS.map((name) => ({ name, message: NO_BUILTINS })),
          { name: 'knex', message: NO_IO },
          { name: 'pg', message: NO_IO },
        ],
        patterns: [
          { regex: `^node:|^(${BUILTINS.join('|')})/`, message: NO_BUILTINS },
          { regex: '^@aws-sdk/', message: NO_IO },
          { regex: '^(\\.\\./)+(infra|db)(/|$)', message: NO_IO },
        ],
      }],
    },
  },
);
