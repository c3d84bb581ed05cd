/**
 * Budget alerts (roles with `budget_alerts.manage`: owner, admin and billing):
 *   GET    /v1/budget/alerts        list
 *   POST   /v1/budget/alerts        create `{threshold_type, threshold, channels: {email?: {to}, webhook?: {url}}}`
 *   GET    /v1/budget/alerts/:id    one alert
 *   DELETE /v1/budget/alerts/:id    delete
 * Alerts are shown with their deliveries per cycle and channel (`sent`, or `failed` once retries gave up).
 */
import Router from '@koa/router';
import { alertDeliveries, budgetAlertView, budgetAlertViews, createBudgetAlert, deleteBudgetAlert, getBudgetAlert } from '../../domain/budget-alerts';
import type { AppDeps, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { requirePermission } from '../http/permissions';
import { validateBudgetAlertBody } from './budget-alerts-body';

export function budgetAlertsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  router.get('/budget/alerts', requirePermission('budget_alerts.manage'), async (ctx) => {
    ctx.body = { object: 'list', data: await budgetAlertViews(deps.db, ctx.state.auth.workspaceId) };
  });

  router.get('/budget/alerts/:alertId', requirePermission('budget_alerts.manage'), async (ctx) => {
    const alert = await getBudgetAlert(deps.db, ctx.state.auth.workspaceId, ctx.params.alertId);
    ctx.body = budgetAlertView(alert, (await alertDeliveries(deps.db, [alert.id])).get(alert.id));
  });

  router.post('/budget/alerts', requirePermission('budget_alerts.manage'), async (ctx) => {
    const body = validateBudgetAlertBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    const alert = await createBudgetAlert(deps.db, {
      workspaceId: ctx.state.auth.workspaceId, thresholdType: body.threshold_type, threshold: body.threshold, channels: body.channels,
      actor: `key:${ctx.state.auth.keyId}`, webhooks: { allowPrivateAddresses: deps.config.allowPrivateWebhooks },
    });
    ctx.status = 201;
    ctx.body = budgetAlertView(alert, []);
  });

  router.delete('/budget/alerts/:alertId', requirePermission('budget_alerts.manage'), async (ctx) => {
    const { id, deleted } = await deleteBudgetAlert(deps.db, { workspaceId: ctx.state.auth.workspaceId, alertId: ctx.params.alertId, actor: `key:${ctx.state.auth.keyId}` });
    ctx.body = { id, object: 'budget_alert', deleted };
  });

  return router;
}
