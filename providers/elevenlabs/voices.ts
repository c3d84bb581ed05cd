/**
 * ElevenLabs' premade voices by name, so callers can say `voice: "rachel"` as they would say `alloy`
 * elsewhere. Anything not listed is taken to be a voice id (premade, cloned or from the voice library).
 */
const PREMADE_VOICE_IDS: Record<string, string> = {
  adam: 'pNInz6obpgDQGcFmaJgB',
  alice: 'Xb7hH8MSUJpSbSDYk0k2',
  antoni: 'ErXwobaYiN019PkySvjV',
  bill: 'pqHfZKP75CvOlQylNhV4',
  brian: 'nPczCjzI2devNBz1zQrb',
  callum: 'N2lVS1w4EtoT3dr4eOWO',
  charlie: 'IKne3meq5aSn9XLyUdCD',
  chris: 'iP95p4xoKVk53GoZ742B',
  clyde: '2EiwWnXFnvU5JabPnv8n',
  daniel: 'onwK4e9ZLuTAKqWW03F9',
  elli: 'MF3mGyEYCl7XYWbV9V6O',
  eric: 'cjVigY5qzO86Huf0OWal',
  george: 'JBFqnCBsd6RMkjVDRZzb',
  harry: 'SOYHLrjzK2X1ezoPC6cr',
  jessica: 'cgSgspJ2msm6clMCkdW9',
  laura: 'FGY2WhTYpPnrIDTdsKH5',
  liam: 'TX3LPaxmHKxFdv7VOQHJ',
  lily: 'pFZP5JQG7iQjIQuC4Bku',
  matilda: 'XrExE9yKIg1WjnnlVkGX',
  rachel: '21m00Tcm4TlvDq8ikWAM',
  river: 'SAz9YHcvj6GT2YYXdXww',
  roger: 'CwhRBWXzGAHq8TQ4Fs17',
  sarah: 'EXAVITQu4vr4xnSDxMaL',
  will: 'bIHbv24MWmeRgasZH58o',
};

/** The ElevenLabs voice id for a premade voice name (any case), or the value itself. */
export function resolveVoiceId(voice: string): string {
  const trimmed = voice.trim();
  return PREMADE_VOICE_IDS[trimmed.toLowerCase()] ?? trimmed;
}
