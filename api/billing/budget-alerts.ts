/**
 * Budget alerts (roles with `budget_alerts.manage`: owner, admin and billing):
 *   GET    /v1/budget/alerts        list
 *   POST   /v1/budget/alerts        create `{threshold_type, threshold, channels: {email?: {to}, webhook?: {url}}}`
 *   DELETE /v1/budget/alerts/:id    delete
 */
import Router from '@koa/router';
import { budgetAlertView, createBudgetAlert, deleteBudgetAlert, listBudgetAlerts } from '../../domain/budget-alerts';
import type { AppDeps, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { requirePermission } from '../http/permissions';
import { validateBudgetAlertBody } from './budget-alerts-body';

export function budgetAlertsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  router.get('/budget/alerts', requirePermission('budget_alerts.manage'), async (ctx) => {
    const alerts = await listBudgetAlerts(deps.db, ctx.state.auth.workspaceId);
    ctx.body = { object: 'list', data: alerts.map(budgetAlertView) };
  });

  router.post('/budget/alerts', requirePermission('budget_alerts.manage'), async (ctx) => {
    const body = validateBudgetAlertBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    const alert = await createBudgetAlert(deps.db, {
      workspaceId: ctx.state.auth.workspaceId, thresholdType: body.threshold_type, threshold: body.threshold, channels: body.channels,
      actor: `key:${ctx.state.auth.keyId}`,
    });
    ctx.status = 201;
    ctx.body = budgetAlertView(alert);
  });

  router.delete('/budget/alerts/:alertId', requirePermission('budget_alerts.manage'), async (ctx) => {
    const { id, deleted } = await deleteBudgetAlert(deps.db, { workspaceId: ctx.state.auth.workspaceId, alertId: ctx.params.alertId, actor: `key:${ctx.state.auth.keyId}` });
    ctx.body = { id, object: 'budget_alert', deleted };
  });

  return router;
}
