/**
 * The workspace's own provider keys (bring your own key): list them (last four characters only), add one
 * (tested with a call to the provider first; a key the provider refuses is never stored), remove one. Owners
 * and admins only (`provider_keys.manage`); without a BYOK key ring every route answers 403 `byok_not_configured`.
 */
import Router from '@koa/router';
import { InvalidRequestError, PermissionDeniedError } from '../../core/errors';
import { addProviderKey, keyCheckFor, keyProviders, listProviderKeys, removeProviderKey, testProviderKey, type ProviderKeySummary, type WorkspaceProviderKeys } from '../../domain/provider-keys';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { requirePermission } from '../http/permissions';
import { compileSchema } from '../../endpoints/validate';

const validateKeyBody = compileSchema<{ provider: string; key: string }>({
  type: 'object',
  required: ['provider', 'key'],
  // Printable ASCII without spaces: what every provider's keys are, and nothing a header could be split with.
  properties: { provider: { type: 'string', minLength: 1, maxLength: 64 }, key: { type: 'string', pattern: '^[\\x21-\\x7e]{8,512}$' } },
  additionalProperties: false,
});

function keyObject(k: ProviderKeySummary) {
  return { object: 'provider_key', id: k.id, provider: k.provider, last_four: k.lastFour, created_by: k.createdBy, created_at: Math.floor(k.createdAt.getTime() / 1000) };
}

export function providerKeysRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const byok = (): WorkspaceProviderKeys => {
    if (!deps.providerKeys) throw new PermissionDeniedError('Workspace provider keys are off on this gateway (its operator has not set BYOK_KEY_RING).', { code: 'byok_not_configured' });
    return deps.providerKeys;
  };
  const actor = (ctx: GatewayContext) => ctx.state.auth.userId ?? ctx.state.auth.keyId;

  router.get('/provider-keys', requirePermission('provider_keys.manage'), async (ctx) => {
    const keys = byok();
    const data = await listProviderKeys(deps.db, ctx.state.auth.workspaceId);
    ctx.body = { object: 'list', data: data.map(keyObject), providers: await keyProviders(deps.catalog, keys.platform), fee_percent: keys.feeBasisPoints / 100 };
  });

  router.post('/provider-keys', requirePermission('provider_keys.manage'), async (ctx) => {
    const body = validateKeyBody(await readJsonBody(ctx, 16 * 1024));
    const keys = byok();
    const check = await keyCheckFor(deps.catalog, keys.platform, body.provider);
    if (!check) {
      const known = await keyProviders(deps.catalog, keys.platform);
      throw new InvalidRequestError(`'${body.provider}' does not take a workspace's own key here; one of: ${known.join(', ')}.`, { code: 'provider_not_supported', param: 'provider' });
    }
    await testProviderKey(keys.platform, check, body.key);
    const saved = await addProviderKey(deps.db, keys.ring, { workspaceId: ctx.state.auth.workspaceId, provider: body.provider, key: body.key, actor: actor(ctx) });
    ctx.status = 201;
    // The key itself, this once (the caller's own, as sent); from now on only its last four characters.
    ctx.body = { ...keyObject(saved), key: body.key };
  });

  router.delete('/provider-keys/:provider', requirePermission('provider_keys.manage'), async (ctx) => {
    byok();
    await removeProviderKey(deps.db, { workspaceId: ctx.state.auth.workspaceId, provider: ctx.params.provider, actor: actor(ctx) });
    ctx.body = { object: 'provider_key', provider: ctx.params.provider, deleted: true };
  });

  return router;
}
