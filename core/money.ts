/**
 * Credits are exact: stored and summed as integer micro-credits (1 credit = 1,000,000 µcr, and 1 credit is
 * about 0.01 currency units). Conversions to and from decimal credits happen only at the edges.
 */
export const MICRO_PER_CREDIT = 1_000_000;

/** Decimal credits (e.g. from the CLI or a catalog price) to micro-credits, refusing sub-micro precision. */
export function creditsToMicro(credits: number | string): number {
  const text = typeof credits === 'number' ? credits.toFixed(6) : credits.trim();
  const m = /^(-?)(\d+)(?:\.(\d{1,6})\d*)?$/.exec(text);
  if (!m) throw new RangeError(`not a credit amount: ${credits}`);
  const micro = Number(m[2]) * MICRO_PER_CREDIT + Number((m[3] ?? '').padEnd(6, '0'));
  if (!Number.isSafeInteger(micro)) throw new RangeError(`credit amount out of range: ${credits}`);
  return m[1] ? -micro : micro;
}

/** Micro-credits to decimal credits for responses: 1234 -> 0.001234 (exact to the micro-credit). */
export function microToCredits(micro: number): number {
  return Number((micro / MICRO_PER_CREDIT).toFixed(6));
}
