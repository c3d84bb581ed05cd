import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { getBalance, ledgerSum } from '../../../domain/ledger';
import { startTestGateway, type TestGateway } from '../../support/gateway';

describe('POST /operator/credits', function () {
  this.timeout(120_000);
  const token = randomBytes(24).toString('base64url');
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ worker: false, env: { OPERATOR_TOKEN: token } });
  });
  after(() => gateway?.stop());

  const add = (body: unknown, opts: { auth?: string | null; key?: string | null } = {}) => fetch(`${gateway.url}/operator/credits`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(opts.auth === null ? {} : { authorization: opts.auth ?? `Bearer ${token}` }),
      ...(opts.key === null ? {} : { 'idempotency-key': opts.key ?? randomBytes(8).toString('hex') }),
    },
    body: JSON.stringify(body),
  });

  it('adds credits once per Idempotency-Key, audited with who and why', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const body = { workspace_id: tenant.workspaceId, credits: 250.5, operator: 'ada@ops', reason: 'invoice 2026-118 paid by bank transfer' };
    const first = await add(body, { key: 'inv-118' });
    expect(first.status).to.equal(201);
    expect(await first.json()).to.deep.equal({ object: 'operator.credits', workspace_id: tenant.workspaceId, credits: 250.5, applied: true, balance: 250.5 });
    const again = await add(body, { key: 'inv-118' });
    expect(again.status).to.equal(200);
    expect(again.headers.get('x-idempotent-replayed')).to.equal('true');
    expect(((await again.json()) as { applied: boolean }).applied).to.equal(false);

    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).topupMicro).to.equal(250_500_000);
    expect(await ledgerSum(gateway.runtime.db, tenant.workspaceId)).to.deep.equal({ ledgerMicro: 250_500_000, bucketsMicro: 250_500_000 });
    const audit = await gateway.runtime.db('audit_log').where({ workspace_id: tenant.workspaceId, action: 'credits.operator_add' }).select('actor', 'data');
    expect(audit).to.have.length(1);
    expect(audit[0].actor).to.equal('operator:ada@ops');
    expect(audit[0].data).to.deep.equal({ credits: 250.5, reason: 'invoice 2026-118 paid by bank transfer', idempotencyKey: 'inv-118' });
  });

  it('requires the operator token: API keys and wrong tokens are refused, nothing added', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const body = { workspace_id: tenant.workspaceId, credits: 10, operator: 'x', reason: 'y' };
    for (const auth of [null, `Bearer ${tenant.key}`, `Bearer ${token}x`, 'Basic abc']) {
      const res = await add(body, { auth });
      expect(res.status, String(auth)).to.equal(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('operator_token_required');
    }
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(0);
  });

  it('refuses bad input with a 400 naming it: no reason, no operator, bad amounts, unknown workspace, no key', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const good = { workspace_id: tenant.workspaceId, credits: 10, operator: 'ada', reason: 'goodwill' };
    const cases: Array<[Record<string, unknown>, string | null | undefined, string]> = [
      [{ ...good, reason: undefined }, undefined, 'reason'],
      [{ ...good, reason: '   ' }, undefined, 'reason'],
      [{ ...good, operator: undefined }, undefined, 'operator'],
      [{ ...good, operator: 'a\u0007b' }, undefined, 'operator'],
      [{ ...good, credits: 0 }, undefined, 'credits'],
      [{ ...good, credits: 1.0000001 }, undefined, 'credits'],
      [{ ...good, credits: 1e12 }, undefined, 'credits'],
      [{ ...good, workspace_id: 'ws_missing' }, undefined, 'workspace_id'],
      [good, null, 'Idempotency-Key'],
    ];
    for (const [body, key, param] of cases) {
      const res = await add(body, { key });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(((await res.json()) as { error: { param: string } }).error.param, JSON.stringify(body)).to.equal(param);
    }
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(0);
  });
});
