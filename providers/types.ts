/**
 * The adapter interface every provider wire family implements, one small interface per modality.
 * Requests and results are the gateway's canonical shapes (OpenAI-like, since that is our public wire
 * format); each adapter translates them to and from its provider's wire format. Binary outputs are
 * Buffers; callers decide where they are stored.
 */
import type { UpstreamError } from '../core/errors';

/** Closed union: why a generation stopped. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other';

/** Closed usage shape for token-priced calls. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those written to the provider's prompt cache (5-minute and 1-hour lifetimes) and read from it. */
  cacheWriteTokens?: number;
  cacheWrite1hTokens?: number;
  cacheReadTokens?: number;
}

/** Per call: cancellation, the gateway request id, and the per-attempt timeout. */
export interface CallContext {
  signal?: AbortSignal;
  requestId: string;
  /** Upper bound for one upstream attempt (connect + full response, or first byte for streams). */
  timeoutMs?: number;
  /** Test/demo knobs forwarded from the client (e.g. `x-simulate-failure`), only honoured by `simulated`. */
  simulate?: SimulationDirective;
  /** Names a call that may be repeated (a video submission retried after a crash): providers that take one treat a repeat as the same call. */
  idempotencyKey?: string;
}

/** Tells the `simulated` provider to misbehave, so retries and fallbacks can be shown live. */
export interface SimulationDirective {
  /** `429`, `500`, `503`, `timeout`, `slow`, `malformed`, `400`. */
  failure?: string;
  /** How many attempts fail before it succeeds (default: every attempt). */
  failTimes?: number;
  /** Attempt number of this call (1-based), so `failTimes` is deterministic across retries. */
  attempt?: number;
  /** For `slow`: delay before answering, ms. */
  delayMs?: number;
}

// ---------------------------------------------------------------- chat

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'input_audio'; input_audio: { data: string; format: string } }
  | { type: 'file'; file: { file_id?: string; filename?: string; file_data?: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | ChatContentPart[]; name?: string }
  | { role: 'user'; content: string | ChatContentPart[]; name?: string }
  | { role: 'assistant'; content: string | ChatContentPart[] | null; tool_calls?: ChatToolCall[]; name?: string }
  | { role: 'tool'; content: string | ChatContentPart[]; tool_call_id: string };

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ChatResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean; description?: string } };

/** OpenAI's per-token log probabilities (our canonical shape, since OpenAI's is the public wire format). */
export interface ChatTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] | null }>;
}

export interface ChatLogprobs {
  content: ChatTokenLogprob[] | null;
  refusal?: ChatTokenLogprob[] | null;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /**
   * Choices to generate. Only sent to adapters whose `nativeChoices` is true; for the others the caller
   * makes `n` calls (and gets one choice from each).
   */
  n?: number;
  tools?: ChatTool[];
  toolChoice?: ChatToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ChatResponseFormat;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  user?: string;
  logprobs?: boolean;
  /** Alternatives per token (0..20), with `logprobs`. */
  topLogprobs?: number;
  /** Token id (as a string) -> bias from -100 to 100. */
  logitBias?: Record<string, number>;
  /** OpenAI's names (`none`, `minimal`, `low`, `medium`, `high`); each family maps them onto its own setting. */
  reasoningEffort?: string;
  verbosity?: string;
  /**
   * The client's own Anthropic Messages request (`POST /v1/messages` on an Anthropic model), for adapters
   * that speak Anthropic's wire: sent as it came (the adapter sets the model and `stream`), with the
   * client's `anthropic-beta` flags. Other adapters serve the canonical fields above.
   */
  anthropicMessages?: { body: Record<string, unknown>; beta: string | null };
}

/** One answer of a chat call. */
export interface ChatChoice {
  /** Text of the answer, null when the model only called tools. */
  content: string | null;
  toolCalls: ChatToolCall[];
  finishReason: FinishReason;
  /** Present when the request asked for `logprobs`. */
  logprobs?: ChatLogprobs;
  /** The model's visible reasoning before its answer, each part with the signature that vouches for it (reasoning models). */
  reasoning?: ChatReasoning[];
}

/** One part of a model's reasoning: its text and the opaque signature a later turn sends back with it. */
export interface ChatReasoning {
  text: string;
  signature: string;
}

export interface ChatResult extends ChatChoice {
  /** For the whole call (every choice). */
  usage: TokenUsage;
  /** The provider's response id, for support. */
  upstreamId?: string;
  /** Choices 1..n-1 of a request for `n` > 1 (the result itself is choice 0). */
  moreChoices?: ChatChoice[];
  /** The upstream's own Message, when the request was sent as the client's Anthropic request (`anthropicMessages`). */
  anthropicMessage?: Record<string, unknown>;
}

/**
 * Parts of a streamed answer, in order. Exactly one `finish` part ends a successful stream. `choice` is the
 * choice index (absent: 0) when the request asked for `n` > 1.
 */
export type ChatStreamPart =
  | { type: 'text-delta'; delta: string; choice?: number; logprobs?: ChatTokenLogprob[] }
  | { type: 'tool-call-delta'; index: number; id?: string; name?: string; argumentsDelta: string; choice?: number }
  /** One upstream event of an answer to `anthropicMessages`, as it came (before the parts it also yields). */
  | { type: 'anthropic-event'; event: Record<string, unknown>; choice?: number }
  /** Reasoning, streamed before the answer: text deltas, then the part's signature (a new part follows a signature). */
  | { type: 'reasoning-delta'; delta: string; signature?: string; choice?: number }
  /** `finishReasons`: every choice's reason by index, when there were several (`finishReason` is choice 0's). */
  | { type: 'finish'; finishReason: FinishReason; usage: TokenUsage; finishReasons?: FinishReason[] };

export interface ChatModelAdapter {
  /** Whether one call answers `n` choices; otherwise the gateway makes one call per choice. */
  readonly nativeChoices?: boolean;
  doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult>;
  /** Errors before the first part are thrown from the first `next()`; later ones end the iteration. */
  doStream(req: ChatRequest, ctx: CallContext): AsyncIterable<ChatStreamPart>;
}

// ---------------------------------------------------------------- embeddings

export interface EmbeddingRequest {
  input: string[];
  /** Token ids per input instead of texts (`input` is then empty); only for adapters with `tokenInput`. */
  tokens?: number[][];
  dimensions?: number;
}

export interface EmbeddingResult {
  embeddings: number[][];
  usage: { inputTokens: number };
}

export interface EmbeddingModelAdapter {
  /** Whether the adapter can send token ids (`tokens`) upstream. */
  readonly tokenInput?: boolean;
  doEmbed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult>;
}

// ---------------------------------------------------------------- images

export interface GeneratedImage {
  /** Raw bytes, when the provider returned them inline (or we fetched them). */
  data?: Buffer;
  /** A provider-hosted URL, when it returned one instead of bytes. */
  url?: string;
  mediaType: string;
  revisedPrompt?: string;
}

export interface ImageGenerateRequest {
  prompt: string;
  n: number;
  size?: string;
  /** Every other validated parameter (quality, style, background, aspect_ratio, seed, ...), as sent. */
  params: Record<string, unknown>;
}

export interface ImageInputFile {
  data: Buffer;
  filename: string;
  mediaType: string;
}

export interface ImageEditRequest extends ImageGenerateRequest {
  images: ImageInputFile[];
  mask?: ImageInputFile;
}

/** `/images/variations`: new images like the input one, no prompt. */
export interface ImageVariationRequest {
  image: ImageInputFile;
  n: number;
  size?: string;
  params: Record<string, unknown>;
}

export interface ImageResult {
  images: GeneratedImage[];
  /** `imageInputTokens`: the part of the input that was images (edits), when the provider says. */
  usage?: TokenUsage & { imageInputTokens?: number };
  /** The settings the provider reports it used (GPT Image resolves `auto` quality and size). */
  reported?: { size?: string; quality?: string; background?: string; outputFormat?: string };
}

export interface ImageModelAdapter {
  doGenerate(req: ImageGenerateRequest, ctx: CallContext): Promise<ImageResult>;
  doEdit?(req: ImageEditRequest, ctx: CallContext): Promise<ImageResult>;
  doVary?(req: ImageVariationRequest, ctx: CallContext): Promise<ImageResult>;
}

// ---------------------------------------------------------------- speech

export type SpeechFormat = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';

export interface SpeechRequest {
  input: string;
  voice: string;
  format: SpeechFormat;
  speed: number;
  instructions?: string;
}

export interface SpeechResult {
  audio: Buffer;
  mediaType: string;
  /** Length of the produced audio, when known. */
  seconds?: number;
}

export interface SpeechModelAdapter {
  doSynthesize(req: SpeechRequest, ctx: CallContext): Promise<SpeechResult>;
}

// ---------------------------------------------------------------- transcription

export interface TranscriptionRequest {
  audio: Buffer;
  filename: string;
  mediaType: string;
  language?: string;
  prompt?: string;
  temperature?: number;
}

export interface TranscriptionSegment {
  id: number;
  start: number;
  end: number;
  text: string;
  /** Whisper's decoding details of the segment, when the provider reports them. */
  decoding?: { seek: number; tokens: number[]; temperature: number; avgLogprob: number; compressionRatio: number; noSpeechProb: number };
}

export interface TranscriptionResult {
  text: string;
  language?: string;
  durationSeconds: number;
  segments: TranscriptionSegment[];
}

/** Speech in any language to English text (`/audio/translations`). */
export type TranslationRequest = Omit<TranscriptionRequest, 'language'>;

export interface TranscriptionModelAdapter {
  doTranscribe(req: TranscriptionRequest, ctx: CallContext): Promise<TranscriptionResult>;
  doTranslate?(req: TranslationRequest, ctx: CallContext): Promise<TranscriptionResult>;
}

// ---------------------------------------------------------------- video (long-running)

export interface VideoSubmitRequest {
  prompt: string;
  durationSeconds?: number;
  resolution?: string;
  aspectRatio?: string;
  n: number;
  image?: { data: Buffer; mediaType: string };
  personGeneration?: 'dont_allow' | 'allow_adult' | 'allow_all';
  params: Record<string, unknown>;
}

export type VideoPollResult =
  | { status: 'processing'; progress?: number }
  /** Each video is a provider URL to download, or (providers that answer inline) the bytes. */
  | { status: 'succeeded'; videos: Array<{ url?: string; data?: Buffer; mediaType: string; durationSeconds?: number }> }
  | { status: 'failed'; error: string; retryable?: boolean };

export interface VideoModelAdapter {
  doSubmit(req: VideoSubmitRequest, ctx: CallContext): Promise<{ operationId: string }>;
  doPoll(operationId: string, ctx: CallContext): Promise<VideoPollResult>;
}

// ---------------------------------------------------------------- music

export interface MusicRequest {
  prompt: string;
  durationSeconds: number;
  format: 'mp3' | 'wav';
  /** Other validated parameters (seed, instrumental, ...), as sent. */
  params: Record<string, unknown>;
}

export interface MusicResult {
  tracks: Array<{ data: Buffer; mediaType: string; durationSeconds: number }>;
}

/** Music providers answer with the audio (they may take tens of seconds). */
export interface MusicModelAdapter {
  doGenerate(req: MusicRequest, ctx: CallContext): Promise<MusicResult>;
}

// ---------------------------------------------------------------- moderation

/** One part of a multimodal moderation input (OpenAI's shape). */
export type ModerationPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface ModerationRequest {
  /** Each entry is one input to classify: a text, or parts (text and images) classified together. */
  inputs: Array<string | ModerationPart[]>;
}

/** OpenAI's result shape, one per input: categories by OpenAI's names (`hate/threatening`, ...). */
export interface ModerationResult {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
  /** Which kinds of input (`text`, `image`) each category was judged on. */
  category_applied_input_types?: Record<string, string[]>;
}

export interface ModerationModelAdapter {
  doModerate(req: ModerationRequest, ctx: CallContext): Promise<{ results: ModerationResult[] }>;
}

// ---------------------------------------------------------------- provider

/**
 * One provider instance (a wire family bound to a base URL and credentials). Each modality method binds
 * an adapter to the provider's own model id (the catalog's `upstreamId`, never our slug).
 */
// ---------------------------------------------------------------- provider batches

/** One request of a provider's batch: our name for it, and its body on the provider's wire. */
export interface NativeBatchRequest {
  customId: string;
  body: Record<string, unknown>;
}

/** Where a provider's batch is: still running, or ended (`failed`: the provider refused it as a whole). */
export type NativeBatchState =
  | { status: 'running' }
  | { status: 'ended'; ending: 'completed' | 'cancelled' | 'expired' | 'failed'; error: string | null };

/** One request's outcome in a provider batch's results: answered, refused, or never run (cancelled, expired). */
export type NativeBatchOutcome =
  | { customId: string; kind: 'served'; result: ChatResult }
  | { customId: string; kind: 'failed'; error: UpstreamError }
  | { customId: string; kind: 'not_run' };

/**
 * A provider's own batch API (OpenAI's `/v1/batches`, Anthropic's `/v1/messages/batches`), for chat requests: each request's wire body is the one
 * the synchronous call sends, each answer is read as the synchronous call reads one.
 */
export interface NativeBatches {
  /** The batch endpoints (as batches name them: `/v1/chat/completions`) whose lines it takes. */
  readonly urls: readonly string[];
  chatBody(upstreamModel: string, req: ChatRequest): Record<string, unknown>;
  /**
   * Uploads the requests and creates the batch, tagged `tag` (the gateway's batch id) where the provider
   * keeps a tag; its provider id.
   */
  submit(requests: NativeBatchRequest[], tag: string, ctx: CallContext): Promise<string>;
  /**
   * The provider's batch tagged `tag` made lately, if any (a submission retried after the provider made its
   * batch but before its id was kept). Absent where the provider keeps no tag on a batch.
   */
  findTagged?(tag: string, ctx: CallContext): Promise<string | null>;
  state(batchId: string, ctx: CallContext): Promise<NativeBatchState>;
  /** Asks the provider to stop the batch (it then ends `cancelled`, with the requests it ran). */
  cancel(batchId: string, ctx: CallContext): Promise<void>;
  /** The outcome of every request the ended batch reports. */
  results(batchId: string, ctx: CallContext): AsyncIterable<NativeBatchOutcome>;
}

export interface Provider {
  readonly id: string;
  readonly family: string;
  /** False when required credentials are missing; models are then reported unavailable. */
  readonly configured: boolean;
  chat?(upstreamModel: string): ChatModelAdapter;
  embedding?(upstreamModel: string): EmbeddingModelAdapter;
  image?(upstreamModel: string): ImageModelAdapter;
  speech?(upstreamModel: string): SpeechModelAdapter;
  transcription?(upstreamModel: string): TranscriptionModelAdapter;
  video?(upstreamModel: string): VideoModelAdapter;
  music?(upstreamModel: string): MusicModelAdapter;
  moderation?(upstreamModel: string): ModerationModelAdapter;
  /** The provider's own batch API, where its wire family has one. */
  batches?: NativeBatches;
}

/** What a wire family's factory receives for one configured host. */
export interface ProviderOptions {
  /** Provider id as the catalog names it (`openai`, `groq`, `anthropic`, ...). */
  id: string;
  baseUrl: string;
  /** Absent when the operator did not configure credentials: `configured` is then false. */
  apiKey?: string;
  /** Extra headers some hosts need (API version pins, organization ids). */
  headers?: Record<string, string>;
  /** Default per-attempt deadline for this host. */
  timeoutMs?: number;
}
