/**
 * Gemini function calls carry no ids, so we make them: a hash of the response id, the call's position and
 * the call itself, so the same response always yields the same ids.
 *
 * Gemini 3 models also attach a `thoughtSignature` to function-call parts and refuse the next step of a
 * tool loop unless it comes back on that part. The OpenAI shape has nowhere else to keep it, so it rides
 * in the id (`call_<hash>__sig_<signature>`), which callers echo back untouched.
 */
import { createHash } from 'node:crypto';

const SIGNATURE_MARK = '__sig_';

export function makeToolCallId(responseId: string | undefined, index: number, name: string, args: unknown, signature?: string): string {
  const hash = createHash('sha256').update(`${responseId ?? ''}\n${index}\n${name}\n${JSON.stringify(args ?? {})}`).digest('hex').slice(0, 24);
  return signature ? `call_${hash}${SIGNATURE_MARK}${signature}` : `call_${hash}`;
}

export function signatureFromToolCallId(id: string): string | undefined {
  const at = id.indexOf(SIGNATURE_MARK);
  return at < 0 ? undefined : id.slice(at + SIGNATURE_MARK.length) || undefined;
}

/**
 * What Google documents for history whose signatures were lost (or never existed, e.g. calls made by
 * another model): it tells Gemini 3 to skip the check for that step.
 */
export const SKIP_SIGNATURE_VALIDATION = 'skip_thought_signature_validator';

/** Models older than Gemini 3 neither require nor expect signatures. */
export function requiresThoughtSignatures(model: string): boolean {
  return !/^(models\/)?gemini-(1|2)(\.|-)/.test(model);
}
