/** `POST /v1/chat/completions` (streaming is handled by api/chat/stream.ts). */
import Router from '@koa/router';
import { validateChatCompletionBody } from '../../endpoints/chat/body';
import { readJsonBody } from '../http/body';
import { ownReferencedFiles } from '../../endpoints/chat/file-references';
import type { AppDeps, GatewayState } from '../http/context';
import { checkRequestedModel, runModelRequest, sendModelResponse } from '../requests/run';
import { streamChatAnswer } from './stream';

export function chatRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/chat/completions', async (ctx) => {
    const body = validateChatCompletionBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    // Uploaded files named in the messages must be this workspace's (404 as for a missing file otherwise).
    await ownReferencedFiles(deps.db, ctx.state.auth.workspaceId, body.messages);
    await checkRequestedModel(ctx, deps, 'chat.completions', body.model, body);
    if (body.stream) {
      await streamChatAnswer(ctx, deps, { endpoint: 'chat.completions', model: body.model, body });
      return;
    }
    const result = await runModelRequest(ctx, deps, { endpoint: 'chat.completions', model: body.model, body });
    await sendModelResponse(ctx, deps, result);
  });
  return router;
}
