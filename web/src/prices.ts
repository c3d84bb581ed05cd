/**
 * A model's catalog prices as a person reads them: credits per 1M tokens (in / out), per image, per second
 * of audio or video, per 1M characters, per track. Several prices of one kind (image sizes, resolutions)
 * read "from" the lowest.
 */
const n = (v: number) => String(Number(v.toPrecision(6)));
const credits = (v: number) => (v === 1 ? 'credit' : 'credits');

export function priceText(pricing: Record<string, unknown>): string {
  const num = (k: string) => (typeof pricing[k] === 'number' ? pricing[k] as number : undefined);
  const lowest = (k: string) => {
    const values = Object.values((pricing[k] ?? {}) as Record<string, unknown>).filter((v): v is number => typeof v === 'number');
    return values.length ? { value: Math.min(...values), several: new Set(values).size > 1 } : undefined;
  };
  const parts: string[] = [];
  const [input, output] = [num('inputPerMTok'), num('outputPerMTok')];
  if (input !== undefined && output !== undefined) parts.push(`${n(input)} in / ${n(output)} out ${credits(output)} per 1M tokens`);
  else if (input !== undefined) parts.push(`${n(input)} ${credits(input)} per 1M tokens`);
  const image = lowest('perImage');
  if (image) parts.push(`${image.several ? 'from ' : ''}${n(image.value)} ${credits(image.value)} per image`);
  const byResolution = lowest('perSecondByResolution');
  const second = num('perSecond');
  if (byResolution) {
    const least = Math.min(byResolution.value, second ?? Infinity);
    parts.push(`${byResolution.several || second !== undefined ? 'from ' : ''}${n(least)} ${credits(least)} per second`);
  } else if (second !== undefined) parts.push(`${n(second)} ${credits(second)} per second`);
  const chars = num('perMCharacters');
  if (chars !== undefined) parts.push(`${n(chars)} ${credits(chars)} per 1M characters`);
  const track = num('perTrack');
  if (track !== undefined) parts.push(`${n(track)} ${credits(track)} per track`);
  return parts.join(', ');
}
