/**
 * One synchronous model request (chat, embeddings, images, speech, transcription, music), durable end to
 * end: hold credits -> call the model, falling back along the workspace's chain on throttling, 5xx and
 * timeouts -> settle the exact charge and record usage. Every hop shows in the run's history.
 *
 * Ledger steps and the model call are local activities: with eager start the whole request runs in one
 * workflow task on the worker inside the API process, with no extra server round trips.
 */
import { activitiesFor, requestResult, serveAlongChain, servedCall, type ModelRequestInput, type ModelRequestResult } from './request-steps';
import { reportingToCaller } from './result-sinks';

export type { HopRecord, ModelRequestInput, ModelRequestResult } from './request-steps';

export async function modelRequestWorkflow(input: ModelRequestInput): Promise<ModelRequestResult> {
  const { models } = activitiesFor(input);
  return reportingToCaller(async () => requestResult(await serveAlongChain(input, {
    call: async (model) => servedCall(await models.callModel({
      endpoint: input.endpoint, model, body: input.body, requestId: input.requestId, created: input.created,
      simulate: input.simulate, workspaceId: input.workspaceId,
    })),
  })));
}
