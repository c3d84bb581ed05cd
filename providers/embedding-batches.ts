/**
 * Embedding providers that cap the texts per call: the input goes out in consecutive JSON POSTs that share
 * one deadline, and their vectors and token counts are joined in input order.
 */
import type { Connection } from './connection';
import type { UpstreamRequest } from './http';
import type { CallContext, EmbeddingResult } from './types';

export async function embedInBatches(
  connection: Connection,
  ctx: CallContext,
  input: string[],
  batchSize: number,
  /** Sends one batch; `request` carries the headers, cancellation and what is left of the deadline. */
  embedBatch: (texts: string[], request: UpstreamRequest) => Promise<{ embeddings: number[][]; inputTokens: number }>,
): Promise<EmbeddingResult> {
  const request = connection.request(ctx, { method: 'POST', headers: { accept: 'application/json' } });
  const deadline = connection.deadline(ctx);
  const embeddings: number[][] = [];
  let inputTokens = 0;
  for (let start = 0; start < input.length; start += batchSize) {
    const batch = await embedBatch(input.slice(start, start + batchSize), { ...request, timeoutMs: Math.max(1, deadline - Date.now()) });
    embeddings.push(...batch.embeddings);
    inputTokens += batch.inputTokens;
  }
  return { embeddings, usage: { inputTokens } };
}
