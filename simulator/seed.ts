/**
 * Determinism helpers: every simulated output is a pure function of its inputs, so the same request gives
 * the same bytes on every worker and after restarts.
 */
import { createHash } from 'node:crypto';

/** A 32-bit seed from any list of values (strings, numbers, undefined), order-sensitive. */
export function seedFrom(...parts: unknown[]): number {
  return createHash('sha256').update(JSON.stringify(parts)).digest().readUInt32BE(0);
}

export function hashHex(...parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** Small fast PRNG (mulberry32): returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The simulated tokenizer: about four characters per token, rounded up. */
export function countTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
