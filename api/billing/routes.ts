/**
 * Billing (roles with `billing.read` / `billing.manage`: owner and billing):
 *   GET  /v1/billing/balance  credits by source, the plan, and this cycle's spend
 *   POST /v1/billing/topups   `{credits}` with a required Idempotency-Key; topups never expire
 *   GET  /v1/billing/ledger   the latest credit movements (grants, topups, charges, expiries), newest first
 */
import Router from '@koa/router';
import { audit } from '../../domain/audit';
import { billingSummary, ledgerEntries } from '../../domain/billing-summary';
import { cycleOf } from '../../domain/billing-cycle';
import { InvalidRequestError } from '../../core/errors';
import { topUp } from '../../domain/ledger';
import { creditsToMicro } from '../../core/money';
import type { AppDeps, GatewayState } from '../http/context';
import { canonicalJson, claimIdempotencyKey, readIdempotencyKey, sha256 } from '../../domain/idempotency';
import { readJsonBody } from '../http/body';
import { requirePermission } from '../http/permissions';
import { validateTopupBody } from './body';

export function billingRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  router.get('/billing/balance', requirePermission('billing.read'), async (ctx) => {
    ctx.body = await billingSummary(deps.db, { workspaceId: ctx.state.auth.workspaceId, cycle: cycleOf(new Date()) });
  });

  router.get('/billing/ledger', requirePermission('billing.read'), async (ctx) => {
    ctx.body = { object: 'list', data: await ledgerEntries(deps.db, ctx.state.auth.workspaceId) };
  });

  router.post('/billing/topups', requirePermission('billing.manage'), async (ctx) => {
    const body = validateTopupBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    const key = readIdempotencyKey(ctx.get('idempotency-key'));
    if (!key) {
      throw new InvalidRequestError('A topup needs an Idempotency-Key header, so that a retried request adds credits once.', {
        param: 'Idempotency-Key', code: 'missing_idempotency_key',
      });
    }
    let amountMicro: number;
    try {
      amountMicro = creditsToMicro(body.credits);
    } catch {
      amountMicro = 0;
    }
    if (amountMicro <= 0) {
      throw new InvalidRequestError('credits must be a positive amount with at most 6 decimals (at least 0.000001); amounts are never rounded.', { param: 'credits' });
    }
    const { workspaceId, keyId } = ctx.state.auth;
    const claim = await claimIdempotencyKey(deps.db, { workspaceId, scope: 'billing.topups', key, bodyHash: sha256(canonicalJson(body)), prefix: 'topup' });
    const actor = `key:${keyId}`;
    const applied = await topUp(deps.db, { workspaceId, amountMicro, idempotencyKey: `topup:api:${claim.resourceId}`, actor });
    if (applied) {
      await audit(deps.db, { workspaceId, actor, action: 'credits.topup', subjectType: 'workspace', subjectId: workspaceId, data: { amountMicro, topup: claim.resourceId } });
    } else {
      ctx.set('x-idempotent-replayed', 'true');
    }
    const summary = await billingSummary(deps.db, { workspaceId, cycle: cycleOf(new Date()) });
    ctx.status = applied ? 201 : 200;
    ctx.body = {
      id: claim.resourceId,
      object: 'billing.topup',
      workspace_id: workspaceId,
      credits: body.credits,
      replayed: !applied,
      balance: summary.balance,
      topup_credits: summary.topup_credits,
    };
  });

  return router;
}
