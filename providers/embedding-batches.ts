/**
 * Embedding providers that cap the texts per call: the input goes out in consecutive batches that share one
 * deadline, and their vectors and token counts are joined in input order.
 */
import type { EmbeddingResult } from './types';

export async function embedInBatches(
  input: string[],
  opts: { batchSize: number; deadline: number },
  embedBatch: (texts: string[], timeoutMs: number) => Promise<{ embeddings: number[][]; inputTokens: number }>,
): Promise<EmbeddingResult> {
  const embeddings: number[][] = [];
  let inputTokens = 0;
  for (let start = 0; start < input.length; start += opts.batchSize) {
    const batch = await embedBatch(input.slice(start, start + opts.batchSize), Math.max(1, opts.deadline - Date.now()));
    embeddings.push(...batch.embeddings);
    inputTokens += batch.inputTokens;
  }
  return { embeddings, usage: { inputTokens } };
}
