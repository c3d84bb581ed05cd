/**
 * A model record: the single source of truth for routing, validation and pricing. Records live as
 * reviewable JSON in catalog/models/*.json, are validated against catalog/model-record.schema.json and
 * seeded into Postgres (`models` table); operators add or override records without a code change.
 */

export const MODALITIES = ['chat', 'embedding', 'image', 'speech', 'transcription', 'video', 'music', 'moderation'] as const;
export type Modality = (typeof MODALITIES)[number];

export interface ModelCapabilities {
  streaming?: boolean;
  tools?: boolean;
  jsonMode?: boolean;
  vision?: boolean;
  audioInput?: boolean;
  /** Image models that also serve /v1/images/edits. */
  imageEdit?: boolean;
  /** Image models that also serve /v1/images/variations. */
  imageVariation?: boolean;
  /** Video models that take a reference image. */
  imageToVideo?: boolean;
  /** Transcription models that also serve /v1/audio/translations (speech to English text). */
  translation?: boolean;
  /** Embedding models that take token ids (`[1, 2, 3]`) as input: the ids are their tokenizer's. */
  tokenInput?: boolean;
}

/**
 * Prices in credits (1 credit ~ 0.01 currency units; decimals allowed here, converted to exact integer
 * micro-credits when loaded).
 */
export interface ModelPricing {
  /** Token-priced models (chat, embedding, moderation, some image and transcription models). */
  inputPerMTok?: number;
  outputPerMTok?: number;
  /**
   * Prompt caching (Anthropic's models): prompt tokens written to the cache (5-minute and 1-hour lifetimes)
   * and read from it, each per 1M tokens. Cached tokens without a price of their own cost `inputPerMTok`.
   */
  cacheWritePerMTok?: number;
  cacheWrite1hPerMTok?: number;
  cacheReadPerMTok?: number;
  /**
   * Per generated image, keyed `"<quality>:<size>"`; `*` is a wildcard on either side. Lookup order:
   * `q:s`, `q:*`, `*:s`, `*:*`. Models without `quality` but priced by output resolution put their
   * `image_size` (`1K`, `2K`, `4K`) in the quality slot.
   */
  perImage?: Record<string, number>;
  /** Per second of produced or transcribed audio/video. */
  perSecond?: number;
  /** Per second, by video resolution (overrides perSecond for that resolution). */
  perSecondByResolution?: Record<string, number>;
  /** Per 1M characters of speech input. */
  perMCharacters?: number;
  /** Per generated music track (plus perSecond where both are set). */
  perTrack?: number;
  /** Fraction taken off every charge of a line of a batch at this model (0.5: half price); none without it. */
  batchDiscount?: number;
}

/**
 * One accepted request parameter: either the list of allowed values, or a rule. `requires` names another
 * parameter whose value must be one of the given ones (e.g. output_compression only with jpeg/webp).
 * A rule with no constraints (`{}`) accepts the parameter as is (its shape is the endpoint schema's job,
 * e.g. chat `tools`). Lists match a value's `type` when the value is an object (chat `response_format`,
 * `tool_choice`) and every entry when it is an array (`timestamp_granularities`).
 */
export type ParamRule =
  | Array<string | number>
  | {
      type?: 'integer' | 'number' | 'string' | 'boolean';
      /** The allowed values, for a list that also needs `requires` (a bare array is the usual form). */
      values?: Array<string | number>;
      min?: number;
      max?: number;
      maxLength?: number;
      /** Array-valued parameters (e.g. `stop`): at most this many entries; a single value counts as one. */
      maxItems?: number;
      requires?: Record<string, Array<string | number>>;
    };

/**
 * Parameters a model accepts beyond the endpoint's required ones. A request parameter the record does not
 * list is refused with 400 naming it. Image models list their sizes as `supported_sizes` (the public
 * name), which governs the `size` request field; `n` carries the model's maximum.
 */
export type AllowedParams = Record<string, ParamRule>;

export interface ModelRecord {
  slug: string;
  name: string;
  provider: string;
  upstreamId: string;
  modality: Modality;
  /** Image (and other) families: groups models with identical parameter sets, e.g. `dall-e-3`. */
  family?: string;
  ownedBy: string;
  /** Unix seconds, as OpenAI's model objects carry. */
  created: number;
  capabilities: ModelCapabilities;
  contextWindow?: number;
  maxOutputTokens?: number;
  /** Embedding models: native vector length. */
  dimensions?: number;
  pricing: ModelPricing;
  allowedParams: AllowedParams;
  /**
   * Parameters a model cannot use but accepts (and does not send) with these values, because OpenAI
   * accepts them for it and they change nothing (clients send them by default: LangChain's DALL-E wrapper
   * sends `style` and `quality: "standard"` to every model). Any other value is refused as usual.
   */
  ignoredParams?: Record<string, Array<string | number>>;
  /** Defaults applied when the request omits them (e.g. `{"size":"1024x1024","response_format":"url"}`). */
  defaults?: Record<string, string | number | boolean>;
  description?: string;
  deprecated?: boolean;
  /**
   * Other names requests may use for this model (a provider's dated ids and `-latest` names, which clients
   * such as Claude Code send); answers name the model by its slug.
   */
  aliases?: string[];
  /**
   * Batches of this model (every line naming it) are submitted to the provider's own batch API and settled
   * at `pricing.batchDiscount`, when its wire family has one (OpenAI's, Anthropic's; providers/types.ts `NativeBatches`).
   * Without it, the gateway serves a batch's lines itself. An operator's switch: see docs/batches.md.
   */
  batch?: { native?: boolean };
  /**
   * Never in catalog files: set on a workspace's copy of the record when the workspace's own provider key
   * serves it (BYOK), as the share of the list price charged, in basis points (10000 = the full price).
   * catalog/pricing.ts applies it to every charge and estimate.
   */
  chargedBasisPoints?: number;
}
