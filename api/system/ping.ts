/**
 * `GET /v1/ping`: runs the ping workflow (API -> workflow -> activity -> Postgres) under the request id,
 * so the run is findable in the Temporal Web UI by that id.
 */
import Router from '@koa/router';
import type { AppDeps, GatewayState } from '../http/context';
import { requirePermission } from '../http/permissions';
import { requestSearchAttributes } from '../requests/workflow-ids';
import { pingWorkflowId } from '../../workflows/contracts';
import type { pingWorkflow } from '../../workflows/ping';

export function pingRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.get('/ping', requirePermission('models.read'), async (ctx) => {
    const workflowId = pingWorkflowId(ctx.state.requestId);
    const result = await deps.temporal.client.workflow.execute<typeof pingWorkflow>('pingWorkflow', {
      taskQueue: deps.temporal.taskQueue,
      workflowId,
      requestEagerStart: deps.config.eagerStart,
      workflowExecutionTimeout: '30 seconds',
      typedSearchAttributes: requestSearchAttributes({ requestId: ctx.state.requestId, workspaceId: ctx.state.auth.workspaceId, apiKeyId: ctx.state.auth.keyId, endpoint: 'ping' }),
    });
    ctx.body = { object: 'ping', request_id: ctx.state.requestId, ...result };
  });
  return router;
}
