/**
 * Playground projects: a member's folders of chats, each with instructions sent as a system message by
 * every chat in it, and files its chats may attach (readable as domain/playground-files.ts says).
 *   GET    /projects                  the member's projects (pinned first)
 *   POST   /projects                  {name, instructions?, pinned?}
 *   GET    /projects/:id              the project and its files (owner, or a reader of one of its chats)
 *   PATCH  /projects/:id              {name?, instructions?, pinned?} (owner)
 *   DELETE /projects/:id              (owner) its files go, its chats stay, out of any project
 *   GET    /projects/:id/files        its files (as GET /projects/:id)
 *   POST   /projects/:id/files        {filename, content_type, data (base64)} (owner; counted in the storage)
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { deleteProject, filesOfProject, readableProject, storeUpload } from '../../domain/playground-files';
import { projectFor, projectsOf, saveProject, type Reader } from '../../domain/playground';
import { readJsonBody } from '../http/body';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';
import { assertPermission } from '../http/permissions';
import { fileJson, MAX_UPLOAD_BODY, readUpload } from './files';

export function projectRoutes(router: Router<GatewayState>, deps: AppDeps, reader: (ctx: GatewayContext) => Reader): void {
  const body = (ctx: Koa.Context, limit = 256 * 1024) => readJsonBody(ctx, limit);

  router.get('/projects', async (ctx) => {
    ctx.body = { object: 'list', data: await projectsOf(deps.db, reader(ctx)) };
  });
  router.post('/projects', async (ctx) => {
    assertPermission(ctx, 'playground.use');
    ctx.status = 201;
    ctx.body = await saveProject(deps.db, reader(ctx), await body(ctx));
  });
  router.get('/projects/:id', async (ctx) => {
    const project = await readableProject(deps.db, reader(ctx), ctx.params.id);
    ctx.body = { ...project, files: (await filesOfProject(deps.db, project.id)).map(fileJson) };
  });
  router.patch('/projects/:id', async (ctx) => {
    ctx.body = await saveProject(deps.db, reader(ctx), { ...(await body(ctx)), id: ctx.params.id });
  });
  router.delete('/projects/:id', async (ctx) => {
    await deleteProject(deps.db, deps.storage, reader(ctx), ctx.params.id);
    ctx.body = { id: ctx.params.id, object: 'playground.project', deleted: true };
  });
  router.get('/projects/:id/files', async (ctx) => {
    const project = await readableProject(deps.db, reader(ctx), ctx.params.id);
    ctx.body = { object: 'list', data: (await filesOfProject(deps.db, project.id)).map(fileJson) };
  });
  router.post('/projects/:id/files', async (ctx) => {
    assertPermission(ctx, 'playground.use');
    const project = await projectFor(deps.db, reader(ctx), ctx.params.id);
    const upload = readUpload(await body(ctx, MAX_UPLOAD_BODY));
    const file = await storeUpload(deps.db, deps.storage, { ...reader(ctx), projectId: project.id }, upload);
    ctx.status = 201;
    ctx.body = fileJson(file);
  });
}
