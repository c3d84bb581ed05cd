/**
 * `POST /v1/music/generations`. Synchronous, like images: the catalog's music providers answer with the
 * audio, so the request waits for the track and answers signed URLs to it (docs/endpoints-media.md).
 */
import Router from '@koa/router';
import type { AppDeps, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { checkRequestedModel, runModelRequest, sendModelResponse } from '../requests/run';
import { validateMusicGenerationBody } from '../../endpoints/music/body';

export function musicRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/music/generations', async (ctx) => {
    const body = validateMusicGenerationBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    await checkRequestedModel(ctx, deps, 'music.generations', body.model, body);
    const result = await runModelRequest(ctx, deps, { endpoint: 'music.generations', model: body.model, body });
    await sendModelResponse(ctx, deps, result);
  });
  return router;
}
