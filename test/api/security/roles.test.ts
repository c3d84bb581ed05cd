import { expect } from 'chai';
import type { AppDeps } from '../../../api/http/context';
import { v1Routers } from '../../../api/app';
import { can, PERMISSIONS, ROLE_PERMISSIONS } from '../../../domain/permissions';
import { getBalance } from '../../../domain/ledger';
import { ROLES, type Role } from '../../../domain/workspaces';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { callRoute, ROUTES } from '../../support/routes';

describe('security: roles on every route', function () {
  this.timeout(600_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
  });
  after(() => gateway?.stop());

  it('covers every route the API serves', () => {
    const served = new Set<string>();
    const routers = v1Routers({} as AppDeps);
    for (const router of [...routers.resources, ...routers.modelEndpoints]) {
      for (const layer of router.stack) {
        for (const method of layer.methods.filter((m) => m !== 'HEAD')) served.add(`${method} /v1${layer.path}`);
      }
    }
    expect([...served].sort()).to.deep.equal(ROUTES.map((r) => `${r.method} ${r.route}`).sort());
  });

  for (const role of ROLES) {
    it(`${role}: the matrix decides every route, and only model-using roles spend credits`, async () => {
      const tenant = await gateway.newTenant({ role, credits: 1000 });
      const failures: string[] = [];
      for (const route of ROUTES) {
        const res = await callRoute(tenant, route);
        const body = (await res.json().catch(() => null)) as { error?: { type: string; code: string; message: string } } | null;
        const label = `${role} ${route.method} ${route.route} -> ${res.status} ${JSON.stringify(body?.error ?? null)}`;
        if (can(role, route.permission)) {
          // Let through: whatever the route answers (a missing id is a 404; a purchase without a payment
          // processor, 403 `payments_not_configured`; provider keys without a BYOK key ring, 403 `byok_not_configured`), it is not the guard's 403.
          if ((res.status === 403 && !['payments_not_configured', 'byok_not_configured'].includes(body?.error?.code ?? '')) || res.status >= 500) failures.push(label);
          if (route.permission === 'models.use' && res.status !== 200) failures.push(label);
        } else {
          // Anthropic's error shape has no code: the type and the message say it.
          const code = route.anthropicErrors ? undefined : route.permission === 'models.use' ? 'role_cannot_use_models' : 'insufficient_role';
          if (res.status !== 403 || body?.error?.type !== 'permission_error' || body.error.code !== code || !body.error.message.includes(`'${role}'`)) failures.push(label);
        }
      }
      expect(failures).to.deep.equal([]);
      if (!can(role, 'models.use')) await expectNothingSpent(tenant);
    });
  }

  it('refuses a denied upload without storing it, and the client reads the 403', async () => {
    const viewer = await gateway.newTenant({ role: 'viewer' });
    const upload = ROUTES.find((r) => r.route === '/v1/files' && r.method === 'POST')!;
    const res = await callRoute(viewer, upload);
    expect(res.status).to.equal(403);
    expect(await gateway.runtime.db('files').where({ workspace_id: viewer.workspaceId })).to.deep.equal([]);
  });

  it('the matrix is the one the README documents', async () => {
    const { readFile } = await import('node:fs/promises');
    const { repoRoot } = await import('../../../core/paths');
    const readme = await readFile(`${repoRoot}/README.md`, 'utf8');
    for (const [permission] of Object.entries(PERMISSIONS)) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${permission}\``));
      expect(row, permission).to.be.a('string');
      const cells = row!.split('|').slice(1, -1).map((c) => c.trim());
      const marks = cells.slice(-ROLES.length);
      expect(marks, permission).to.deep.equal(ROLES.map((r: Role) => (ROLE_PERMISSIONS[r].includes(permission as keyof typeof PERMISSIONS) ? 'yes' : '—')));
    }
  });

  /** No hold, charge or job: only top-ups (a billing role may buy credits) ever touched the balance. */
  async function expectNothingSpent(tenant: Tenant): Promise<void> {
    const db = gateway.runtime.db;
    const rows = await db('credit_ledger').where({ workspace_id: tenant.workspaceId }).select('kind', 'amount_micro');
    expect(rows.filter((r) => r.kind !== 'topup'), 'ledger').to.deep.equal([]);
    const toppedUp = rows.reduce((sum, r) => sum + Number(r.amount_micro), 0);
    expect((await getBalance(db, tenant.workspaceId)).totalMicro, 'balance').to.equal(toppedUp);
    expect(await db('video_jobs').where({ workspace_id: tenant.workspaceId }), 'video jobs').to.deep.equal([]);
  }
});
