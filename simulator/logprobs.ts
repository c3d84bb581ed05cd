/**
 * Simulated log probabilities: the answer cut into the simulated tokenizer's four-character tokens, each
 * with a seeded log probability and, for `top_logprobs`, the token itself ranked first among seeded
 * alternatives (variants of the token, as a real model's near misses mostly are).
 */
import type { ChatTokenLogprob } from '../providers/types';
import { prng, seedFrom } from './seed';

const CHARS_PER_TOKEN = 4;

export function simulatedLogprobs(text: string, topLogprobs: number, seed: string): ChatTokenLogprob[] {
  const random = prng(seedFrom('logprobs', seed, text));
  return splitTokens(text).map((token) => {
    const logprob = round(-random() * 0.5);
    const alternatives = [token, ...variants(token)].slice(0, topLogprobs);
    let below = logprob;
    const top = alternatives.map((alt, i) => {
      if (i > 0) below = round(below - 0.5 - random() * 3);
      return { token: alt, logprob: i === 0 ? logprob : below, bytes: bytesOf(alt) };
    });
    return { token, logprob, bytes: bytesOf(token), top_logprobs: top };
  });
}

function splitTokens(text: string): string[] {
  const chars = Array.from(text);
  const tokens: string[] = [];
  for (let i = 0; i < chars.length; i += CHARS_PER_TOKEN) tokens.push(chars.slice(i, i + CHARS_PER_TOKEN).join(''));
  return tokens;
}

function variants(token: string): string[] {
  const out = [token.toUpperCase(), token.toLowerCase(), ` ${token.trim()}`, `${token.trim()}.`, token.trim().slice(0, -1) || '_', token.replace(/\s+/g, '')];
  const unique = [...new Set(out.filter((v) => v !== token && v !== ''))];
  for (let i = 0; unique.length < 20; i++) unique.push(`${token.trim()}${i}`);
  return unique;
}

function bytesOf(token: string): number[] {
  return [...Buffer.from(token, 'utf8')];
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
