/**
 * The lint rules that guard the layers (eslint.config.mjs), run on source text placed virtually in the
 * tree: ESLint's lintText with a filePath, so nothing is written to disk.
 */
import { expect } from 'chai';
import path from 'node:path';
import { ESLint, type Linter } from 'eslint';
import { repoRoot } from '../../core/paths';

const PROBE = 'lint-probe.ts';

describe('lint: layer boundaries and the workflow sandbox', function () {
  // Type-aware linting loads the TypeScript project for the first file.
  this.timeout(120_000);
  let eslint: ESLint;
  before(() => {
    eslint = new ESLint({
      cwd: repoRoot,
      // The probes exist only in memory, so tsconfig.json does not list them: type them on their own.
      overrideConfig: { languageOptions: { parserOptions: { projectService: { allowDefaultProject: [`*/${PROBE}`] } } } },
    });
  });

  async function lint(file: string, code: string): Promise<Linter.LintMessage[]> {
    const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
    expect(result.messages.filter((m) => m.fatal), 'the probe parses').to.deep.equal([]);
    return result.messages;
  }
  const byRule = (messages: Linter.LintMessage[], rule: string) => messages.filter((m) => m.ruleId === rule);

  it('refuses an upward import: core/ importing domain/', async () => {
    const messages = await lint(`core/${PROBE}`, "import { topUp } from '../domain/ledger';\nexport const probe = topUp;\n");
    const errors = byRule(messages, 'boundaries/dependencies');
    expect(errors, JSON.stringify(messages)).to.have.length(1);
    expect(errors[0].severity).to.equal(2);
    expect(errors[0].message).to.include('core/ may not import domain/').and.include('../domain/ledger');
  });

  it('lets any layer take workflows/contracts and nothing else from workflows/', async () => {
    const allowed = await lint(`core/${PROBE}`, "import { WorkspaceIdKey } from '../workflows/contracts';\nexport const probe = WorkspaceIdKey;\n");
    expect(allowed, JSON.stringify(allowed)).to.deep.equal([]);
    const refused = await lint(`core/${PROBE}`, "import { pingWorkflow } from '../workflows/ping';\nexport const probe = pingWorkflow;\n");
    expect(byRule(refused, 'boundaries/dependencies')).to.have.length(1);
  });

  it('keeps simulator/ out of the layers', async () => {
    const messages = await lint(`api/${PROBE}`, "import * as probe from '../simulator/media/audio-probe';\nexport { probe };\n");
    expect(byRule(messages, 'boundaries/dependencies')[0]?.message).to.include('api/ may not import simulator/');
    const fromTest = await lint(`test/${PROBE}`, "import * as probe from '../simulator/media/audio-probe';\nexport { probe };\n");
    expect(byRule(fromTest, 'boundaries/dependencies')).to.deep.equal([]);
  });

  it('refuses Node built-ins in workflow code', async () => {
    const messages = await lint(`workflows/${PROBE}`, "import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n");
    const errors = byRule(messages, '@typescript-eslint/no-restricted-imports');
    expect(errors, JSON.stringify(messages)).to.have.length(1);
    expect(errors[0].severity).to.equal(2);
    expect(errors[0].message).to.include('node:fs').and.include('Temporal sandbox');
    const bare = await lint(`workflows/${PROBE}`, "import crypto from 'crypto';\nexport const probe = crypto;\n");
    expect(byRule(bare, '@typescript-eslint/no-restricted-imports')).to.have.length(1);
  });

  it('lets workflow code take only types from activities/', async () => {
    const typeOnly = await lint(`workflows/${PROBE}`, "import type { GatewayActivities } from '../activities';\nexport type Probe = GatewayActivities;\n");
    expect(typeOnly, JSON.stringify(typeOnly)).to.deep.equal([]);
    const value = await lint(`workflows/${PROBE}`, "import * as activities from '../activities';\nexport const probe = activities;\n");
    expect(byRule(value, 'boundaries/dependencies')).to.have.length(1);
  });

  it('reports a floating promise', async () => {
    const messages = await lint(`core/${PROBE}`, 'async function work(): Promise<void> {}\nwork();\n');
    expect(byRule(messages, '@typescript-eslint/no-floating-promises')).to.have.length(1);
  });
});
