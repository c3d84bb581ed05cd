/**
 * The workspace's fallback chains (admin settings): list them, set one source model's ordered chain, or
 * remove it. Every role may read them; changing them takes `settings.manage`.
 */
import Router from '@koa/router';
import { InvalidRequestError } from '../../core/errors';
import { listFallbackChains, setFallbackChain } from '../../domain/workspaces';
import type { AppDeps, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { requirePermission } from '../http/permissions';
import { compileSchema } from '../../endpoints/validate';

const validateChainBody = compileSchema<{ chain: string[] }>({
  type: 'object',
  required: ['chain'],
  properties: { chain: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 5 } },
  additionalProperties: false,
});

export function fallbackChainsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const modalityOf = async (slug: string) => (await deps.catalog.get(slug))?.modality ?? null;

  router.get('/fallback-chains', requirePermission('settings.read'), async (ctx) => {
    const chains = await listFallbackChains(deps.db, ctx.state.auth.workspaceId);
    ctx.body = { object: 'list', data: chains.map((c) => ({ object: 'fallback_chain', ...c })) };
  });

  router.put('/fallback-chains/:model', requirePermission('settings.manage'), async (ctx) => {
    const body = validateChainBody(await readJsonBody(ctx, 64 * 1024));
    if (body.chain.length === 0) throw new InvalidRequestError('A chain needs at least one model; DELETE removes a chain.', { param: 'chain' });
    const saved = await setFallbackChain(deps.db, { workspaceId: ctx.state.auth.workspaceId, sourceModel: ctx.params.model, chain: body.chain, actor: ctx.state.auth.keyId, modalityOf });
    ctx.body = { object: 'fallback_chain', ...saved };
  });

  router.delete('/fallback-chains/:model', requirePermission('settings.manage'), async (ctx) => {
    await setFallbackChain(deps.db, { workspaceId: ctx.state.auth.workspaceId, sourceModel: ctx.params.model, chain: [], actor: ctx.state.auth.keyId, modalityOf });
    ctx.body = { object: 'fallback_chain', model: ctx.params.model, deleted: true };
  });

  return router;
}
