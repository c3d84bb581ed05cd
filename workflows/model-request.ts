/**
 * One synchronous model request (chat, embeddings, images, speech, transcription, music), durable end to
 * end: along the workspace's fallback chain, each hop holds credits, calls the model and settles the exact
 * charge with its usage record, falling back on throttling, 5xx and timeouts. Every hop shows in the run's
 * history as one step with its model, outcome and charge.
 *
 * Each hop is one local activity: with eager start the whole request runs in one workflow task on the
 * worker inside the API process, with no extra server round trips.
 */
import { activitiesFor, requestResult, serveAlongChain, servedHop, type ModelRequestInput, type ModelRequestResult } from './request-steps';
import { reportingToCaller } from './result-sinks';
import { plainHopInput } from './hop-inputs';

export type { HopRecord, ModelRequestInput, ModelRequestResult } from './request-steps';

export async function modelRequestWorkflow(input: ModelRequestInput): Promise<ModelRequestResult> {
  const { models } = activitiesFor(input);
  return reportingToCaller(async () => requestResult(await serveAlongChain(input, {
    call: async (_model, depth, ticket) => servedHop(await models.serveHop(plainHopInput(input, depth, ticket))),
  })));
}
