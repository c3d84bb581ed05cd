/**
 * Operators' endpoints, outside /v1 and never open to API keys or sessions: `Authorization: Bearer
 * <OPERATOR_TOKEN>` (off, 404, without one).
 *   POST /operator/credits  `{workspace_id, credits, operator, reason}` with an Idempotency-Key: adds topup
 *                           credits, audited with who (`operator:<operator>`) and why.
 */
import Router from '@koa/router';
import { AuthenticationError, InvalidRequestError, NotFoundError } from '../../core/errors';
import { creditsToMicro, microToCredits } from '../../core/money';
import { operatorAuthorized } from '../../infra/metrics';
import { compileSchema } from '../../endpoints/validate';
import { getBalance } from '../../domain/ledger';
import { readIdempotencyKey } from '../../domain/idempotency';
import { addOperatorCredits } from '../../domain/payments';
import { readJsonBody } from '../http/body';
import type { AppDeps, GatewayState } from '../http/context';

interface OperatorCreditsBody {
  workspace_id: string;
  credits: number;
  operator: string;
  reason: string;
}

const validateOperatorCredits = compileSchema<OperatorCreditsBody>({
  type: 'object',
  required: ['workspace_id', 'credits', 'operator', 'reason'],
  properties: {
    workspace_id: { type: 'string', minLength: 1, maxLength: 100 },
    credits: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000_000 },
    operator: { type: 'string', minLength: 1, maxLength: 200 },
    reason: { type: 'string', minLength: 1, maxLength: 500 },
  },
  additionalProperties: false,
});

export function operatorRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/operator' });
  router.use(async (ctx, next) => {
    const token = deps.operators.token;
    if (!token) throw new NotFoundError('The operator endpoints are off: set OPERATOR_TOKEN to open them.', { code: 'operator_endpoints_disabled' });
    if (!operatorAuthorized(ctx.get('authorization'), token)) {
      throw new AuthenticationError('This endpoint is for operators: send "Authorization: Bearer <OPERATOR_TOKEN>".', { code: 'operator_token_required' });
    }
    await next();
  });

  router.post('/credits', async (ctx) => {
    const body = validateOperatorCredits(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    const key = readIdempotencyKey(ctx.get('idempotency-key'));
    if (!key) throw new InvalidRequestError('Adding credits needs an Idempotency-Key header, so that a retried request adds them once.', { param: 'Idempotency-Key', code: 'missing_idempotency_key' });
    let amountMicro = 0;
    try {
      amountMicro = creditsToMicro(body.credits);
    } catch {
      // more than 6 decimals: refused below
    }
    if (amountMicro <= 0) throw new InvalidRequestError('credits must be a positive amount with at most 6 decimals.', { param: 'credits' });
    const { applied } = await addOperatorCredits(deps.db, { workspaceId: body.workspace_id, amountMicro, operator: body.operator, reason: body.reason, idempotencyKey: key });
    const balance = await getBalance(deps.db, body.workspace_id);
    ctx.status = applied ? 201 : 200;
    if (!applied) ctx.set('x-idempotent-replayed', 'true');
    ctx.body = { object: 'operator.credits', workspace_id: body.workspace_id, credits: body.credits, applied, balance: microToCredits(balance.totalMicro) };
  });
  return router;
}
