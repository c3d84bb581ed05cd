/** Token estimate from text length, for hosts that report no usage (about four characters a token). */
export function estimateTokens(characters: number): number {
  return characters <= 0 ? 0 : Math.ceil(characters / 4);
}
