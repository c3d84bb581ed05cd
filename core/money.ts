/**
 * Credits are exact: stored and summed as integer micro-credits (1 credit = 1,000,000 µcr, and 1 credit is
 * about 0.01 currency units). Conversions to and from decimal credits happen only at the edges.
 */
export const MICRO_PER_CREDIT = 1_000_000;

/**
 * Decimal credits (e.g. from a request or the CLI) to micro-credits, refusing sub-micro precision: an
 * amount with more than 6 decimals is a RangeError, never rounded. A number is read as written (its
 * shortest decimal form), so 1.0000005 is refused and 0.1 is 100000 micro-credits.
 */
export function creditsToMicro(credits: number | string): number {
  const text = typeof credits === 'number' ? String(credits) : credits.trim();
  const m = /^(-?)(\d+)(?:\.(\d{1,6})0*)?$/.exec(text);
  if (!m) throw new RangeError(`not a credit amount with at most 6 decimals: ${credits}`);
  const micro = Number(m[2]) * MICRO_PER_CREDIT + Number((m[3] ?? '').padEnd(6, '0'));
  if (!Number.isSafeInteger(micro)) throw new RangeError(`credit amount out of range: ${credits}`);
  return m[1] ? -micro : micro;
}

/** Micro-credits to decimal credits for responses: 1234 -> 0.001234 (exact to the micro-credit). */
export function microToCredits(micro: number): number {
  return Number((micro / MICRO_PER_CREDIT).toFixed(6));
}
