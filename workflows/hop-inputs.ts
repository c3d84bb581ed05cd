/**
 * What a hop's activity is given, built the one way the workflows build it and the API builds it for a first
 * hop begun while the run starts (activities/first-hop.ts): the same reservation id, model, body and usage
 * record, so the activity can claim that work as its own. Pure and free of the SDK: the API imports it too.
 */
import type { ServeHopInput } from '../activities/requests';
import type { StreamChatInput } from '../activities/stream-chat';
import { hopReservationId } from './contracts';
import type { ChatStreamInput } from './chat-stream';
import type { HopTicket, ModelRequestInput } from './request-steps';

/** The usage record's fields every hop of a request shares. */
export function usageBase(input: ModelRequestInput) {
  return {
    requestId: input.requestId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId, endpoint: input.endpoint,
    modelRequested: input.chain[0], clientRequestId: input.clientRequestId ?? null, userId: input.userId ?? null,
    ...(input.batch ? { batchId: input.batch.batchId, batchCustomId: input.batch.customId } : {}),
  };
}

/** The hold and the usage record's fixed fields of the hop at `depth` of the run `workflowId`. */
export function hopTicket(input: ModelRequestInput, depth: number, startedAt: number, workflowId: string): HopTicket {
  const reservationId = hopReservationId(workflowId, depth);
  return {
    hold: { reservationId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId, allowedModels: input.allowedModels },
    settlement: { reservationId, usage: { ...usageBase(input), modelUsed: input.chain[depth], fallbackDepth: depth }, startedAt },
  };
}

/** A plain request's hop (modelRequestWorkflow). */
export function plainHopInput(input: ModelRequestInput, depth: number, ticket: HopTicket): ServeHopInput {
  return {
    endpoint: input.endpoint, model: input.chain[depth], body: input.body, requestId: input.requestId, created: input.created,
    simulate: input.simulate, workspaceId: input.workspaceId, ...(input.batch ? { batch: true } : {}), ...ticket,
  };
}

/** A streamed chat's hop (chatStreamWorkflow). */
export function streamHopInput(input: ChatStreamInput, depth: number, ticket: HopTicket): StreamChatInput {
  return {
    requestId: input.requestId, endpoint: input.endpoint, model: input.chain[depth], body: input.body, created: input.created,
    fallbackFrom: depth > 0 ? input.chain[0] : null, fallbackDepth: depth, simulate: input.simulate, workspaceId: input.workspaceId,
    ...ticket,
  };
}
