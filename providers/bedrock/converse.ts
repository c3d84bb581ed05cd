/**
 * The gateway's OpenAI-shaped chat as Bedrock's Converse API and back. System and developer messages become
 * `system`; tool results travel as `toolResult` blocks in a user turn; turns of one role in a row are merged,
 * since Converse wants user and assistant to alternate; images go inline as bytes (Converse cannot fetch a URL).
 */
import type {
  ContentBlock, ConverseRequest, ConverseResponse, ConverseStreamOutput, ImageFormat, Message, Tool, ToolChoice,
  TokenUsage as BedrockUsage,
} from '@aws-sdk/client-bedrock-runtime';
import { InvalidRequestError } from '../../core/errors';
import { parseDataUrl } from '../anthropic/content';
import { expectShape } from '../http';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatResult, ChatStreamPart, ChatToolCall, FinishReason, TokenUsage } from '../types';

type Instruction = Extract<ChatMessage, { role: 'system' | 'developer' }>;

function isInstruction(message: ChatMessage): message is Instruction {
  return message.role === 'system' || message.role === 'developer';
}

export function buildConverseRequest(modelId: string, req: ChatRequest): ConverseRequest {
  const system: string[] = [];
  const messages: Message[] = [];
  for (const message of req.messages) {
    if (isInstruction(message)) {
      const text = textOf(message.content);
      if (text) system.push(text);
      continue;
    }
    const turn = toTurn(message);
    if (turn.content!.length === 0) continue;
    const previous = messages[messages.length - 1];
    if (previous && previous.role === turn.role) previous.content!.push(...turn.content!);
    else messages.push(turn);
  }
  const input: ConverseRequest = { modelId, messages };
  if (system.length > 0) input.system = system.map((text) => ({ text }));
  const inference = {
    ...(req.maxTokens !== undefined ? { maxTokens: req.maxTokens } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { topP: req.topP } : {}),
    ...(req.stop && req.stop.length > 0 ? { stopSequences: req.stop } : {}),
  };
  if (Object.keys(inference).length > 0) input.inferenceConfig = inference;
  const toolConfig = toolConfigOf(req, messages);
  if (toolConfig) input.toolConfig = toolConfig;
  return input;
}

/**
 * Converse has no `none`: with tool_choice `none` the tools are left out, unless earlier turns used tools,
 * which Converse only takes with the tools declared (the model then chooses, as with `auto`).
 */
function toolConfigOf(req: ChatRequest, messages: Message[]): ConverseRequest['toolConfig'] {
  const tools = req.tools ?? [];
  if (tools.length === 0) return undefined;
  const usedTools = messages.some((m) => m.content!.some((block) => block.toolUse !== undefined || block.toolResult !== undefined));
  if (req.toolChoice === 'none' && !usedTools) return undefined;
  const specs: Tool[] = tools.map((tool) => ({
    toolSpec: {
      name: tool.function.name,
      ...(tool.function.description ? { description: tool.function.description } : {}),
      inputSchema: { json: (tool.function.parameters ?? { type: 'object', properties: {} }) as never },
    },
  }));
  let toolChoice: ToolChoice | undefined;
  if (typeof req.toolChoice === 'object') toolChoice = { tool: { name: req.toolChoice.function.name } };
  else if (req.toolChoice === 'required') toolChoice = { any: {} };
  else if (req.toolChoice === 'auto') toolChoice = { auto: {} };
  return { tools: specs, ...(toolChoice ? { toolChoice } : {}) };
}

function toTurn(message: Exclude<ChatMessage, Instruction>): Message {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: blocksOf(message.content) };
    case 'assistant': {
      const content = blocksOf(message.content);
      for (const call of message.tool_calls ?? []) content.push(toToolUse(call));
      return { role: 'assistant', content };
    }
    case 'tool': {
      const text = textOf(message.content);
      return { role: 'user', content: [{ toolResult: { toolUseId: message.tool_call_id, content: text ? [{ text }] : [] } }] };
    }
  }
}

function toToolUse(call: ChatToolCall): ContentBlock {
  let input: unknown;
  try {
    input = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch {
    throw new InvalidRequestError(`tool call ${call.id} has arguments that are not JSON`, { param: 'messages', code: 'invalid_tool_call' });
  }
  return { toolUse: { toolUseId: call.id, name: call.function.name, input: input as never } };
}

function textOf(content: string | ChatContentPart[] | null): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.filter((p): p is { type: 'text'; text: string } => p.type === 'text').map((p) => p.text).join('\n');
}

const IMAGE_FORMATS: Record<string, ImageFormat> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

function blocksOf(content: string | ChatContentPart[] | null): ContentBlock[] {
  if (content == null) return [];
  // Converse refuses empty text blocks.
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const blocks: ContentBlock[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'text':
        if (part.text !== '') blocks.push({ text: part.text });
        break;
      case 'image_url': {
        const inline = parseDataUrl(part.image_url.url);
        if (!inline) {
          throw new InvalidRequestError('Bedrock models take images only inline: image_url must be a base64 data: URL', { param: 'messages', code: 'invalid_image_url' });
        }
        const format = IMAGE_FORMATS[inline.mediaType];
        if (!format) throw new InvalidRequestError(`Bedrock models take PNG, JPEG, GIF or WebP images, not ${inline.mediaType}`, { param: 'messages', code: 'invalid_image_url' });
        blocks.push({ image: { format, source: { bytes: new Uint8Array(Buffer.from(inline.base64, 'base64')) } } });
        break;
      }
      case 'file':
        throw new InvalidRequestError('Bedrock models served here do not take file parts; send the text', { param: 'messages', code: 'unsupported_file' });
      case 'input_audio':
        throw new InvalidRequestError('This model does not accept audio input; transcribe the audio first and send text', { param: 'messages', code: 'audio_not_supported_by_model' });
    }
  }
  return blocks;
}

/** Converse's stop reasons in OpenAI's terms. */
export function finishReasonOf(reason: string | undefined): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'content_filtered':
    case 'guardrail_intervened':
      return 'content_filter';
    default:
      return 'other';
  }
}

/** Cache reads and writes are counted apart from `inputTokens`; all of them are prompt tokens. */
export function usageOf(usage: BedrockUsage | undefined): TokenUsage {
  const read = usage?.cacheReadInputTokens ?? 0;
  const written = usage?.cacheWriteInputTokens ?? 0;
  return {
    inputTokens: (usage?.inputTokens ?? 0) + read + written,
    outputTokens: usage?.outputTokens ?? 0,
    ...(written > 0 ? { cacheWriteTokens: written } : {}),
    ...(read > 0 ? { cacheReadTokens: read } : {}),
  };
}

export function parseConverseResponse(provider: string, response: ConverseResponse & { $metadata?: { requestId?: string } }): ChatResult {
  const content = response.output?.message?.content;
  expectShape(provider, Array.isArray(content), 'no output message');
  expectShape(provider, !!response.usage && typeof response.usage.inputTokens === 'number', 'no usage');
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const block of content) {
    if (typeof block.text === 'string') texts.push(block.text);
    else if (block.toolUse) {
      expectShape(provider, typeof block.toolUse.toolUseId === 'string' && typeof block.toolUse.name === 'string', 'toolUse block without id or name');
      toolCalls.push({ id: block.toolUse.toolUseId!, type: 'function', function: { name: block.toolUse.name!, arguments: JSON.stringify(block.toolUse.input ?? {}) } });
    }
    // Reasoning, citations and guard content carry nothing the caller asked for here.
  }
  return {
    content: texts.length > 0 ? texts.join('') : null,
    toolCalls,
    finishReason: finishReasonOf(response.stopReason),
    usage: usageOf(response.usage),
    ...(response.$metadata?.requestId ? { upstreamId: response.$metadata.requestId } : {}),
  };
}

const STREAM_EXCEPTIONS = ['internalServerException', 'modelStreamErrorException', 'validationException', 'throttlingException', 'serviceUnavailableException'] as const;

/**
 * ConverseStream's events as the gateway's stream parts: text deltas, tool calls numbered among tool blocks
 * only (as OpenAI clients expect), and one `finish` once the metadata event brought the usage. An exception
 * event is thrown as the error it names.
 */
export async function* translateConverseStream(provider: string, events: AsyncIterable<ConverseStreamOutput>): AsyncGenerator<ChatStreamPart> {
  let stopReason: string | undefined;
  let finished = false;
  let toolCount = 0;
  const toolIndexOf = new Map<number, number>();
  for await (const event of events) {
    for (const key of STREAM_EXCEPTIONS) {
      const exception = (event as unknown as Record<string, { message?: string } | undefined>)[key];
      if (exception) throw Object.assign(new Error(exception.message ?? key), { name: key[0].toUpperCase() + key.slice(1), $fault: key === 'validationException' ? 'client' : 'server' });
    }
    if (event.contentBlockStart) {
      const tool = event.contentBlockStart.start?.toolUse;
      if (!tool) continue;
      const index = toolCount++;
      toolIndexOf.set(event.contentBlockStart.contentBlockIndex ?? -1, index);
      yield { type: 'tool-call-delta', index, id: tool.toolUseId, name: tool.name, argumentsDelta: '' };
    } else if (event.contentBlockDelta) {
      const delta = event.contentBlockDelta.delta;
      if (delta?.text) yield { type: 'text-delta', delta: delta.text };
      else if (delta?.toolUse?.input) {
        const index = toolIndexOf.get(event.contentBlockDelta.contentBlockIndex ?? -1);
        expectShape(provider, index !== undefined, 'a tool input delta for a block that did not start as a tool');
        yield { type: 'tool-call-delta', index, argumentsDelta: delta.toolUse.input };
      }
    } else if (event.messageStop) {
      stopReason = event.messageStop.stopReason;
    } else if (event.metadata) {
      expectShape(provider, stopReason !== undefined, 'metadata before messageStop');
      finished = true;
      yield { type: 'finish', finishReason: finishReasonOf(stopReason), usage: usageOf(event.metadata.usage) };
    }
  }
  expectShape(provider, finished, 'the stream ended before its metadata event');
}
