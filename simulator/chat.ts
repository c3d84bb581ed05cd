/**
 * Simulated chat: a deterministic answer that echoes a summary of the last user message (acknowledging
 * images, audio and files), tool calls that satisfy the tool's schema, JSON answers for JSON mode, and
 * streaming in several deltas. Usage follows the ~4 characters per token rule.
 */
import type {
  CallContext, ChatContentPart, ChatLogprobs, ChatMessage, ChatReasoning, ChatModelAdapter, ChatRequest, ChatResult, ChatStreamPart, ChatTool, ChatToolCall, FinishReason,
} from '../providers/types';
import { activeFailure, enact, malformedAnswer, malformedStreamEvent, ModelVariant, parseModelVariant, pause, rejectRequest } from './behaviour';
import { probeAudio } from './media/audio-probe';
import { sniffImageSize } from './media/image';
import { simulatedLogprobs } from './logprobs';
import { sampleFromSchema } from './schema-sample';
import { countTokens, hashHex } from './seed';
import type { SimulatedSettings } from './settings';

/** Input tokens an image or a second of audio counts for. */
const TOKENS_PER_IMAGE = 85;
const TOKENS_PER_AUDIO_SECOND = 10;

interface PlannedAnswer extends ChatResult {
  content: string | null;
}

export function createSimulatedChat(upstreamModel: string, settings: SimulatedSettings): ChatModelAdapter {
  const variant = parseModelVariant(upstreamModel);
  const { provider } = settings;
  return {
    // Like OpenAI, one call answers every choice (each different: the choice index seeds it).
    nativeChoices: true,
    async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
      const outcome = await enact(provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
      const [first, ...more] = planAnswers(variant, upstreamModel, req, provider);
      if (outcome === 'malformed') throw malformedAnswer(provider);
      if (more.length === 0) return first;
      const outputTokens = more.reduce((sum, answer) => sum + answer.usage.outputTokens, first.usage.outputTokens);
      const choices = more.map(({ content, toolCalls, finishReason, logprobs }) => ({ content, toolCalls, finishReason, ...(logprobs ? { logprobs } : {}) }));
      return { ...first, usage: { inputTokens: first.usage.inputTokens, outputTokens }, moreChoices: choices };
    },
    doStream(req: ChatRequest, ctx: CallContext): AsyncIterable<ChatStreamPart> {
      return streamAnswer(variant, upstreamModel, req, ctx, settings);
    },
  };
}

async function* streamAnswer(variant: ModelVariant, upstreamModel: string, req: ChatRequest, ctx: CallContext, settings: SimulatedSettings): AsyncGenerator<ChatStreamPart> {
  const { provider } = settings;
  const outcome = await enact(provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
  const answers = planAnswers(variant, upstreamModel, req, provider);
  // The choices stream one after the other, each part naming its choice.
  const parts: ChatStreamPart[] = answers.flatMap((answer, index) => answerParts(answer, answers.length > 1 ? { choice: index } : {}));
  // A malformed stream breaks after its first half, like an upstream that starts fine and then sends garbage.
  const breakAt = outcome === 'malformed' ? Math.max(1, Math.floor(parts.length / 2)) : Infinity;
  for (let i = 0; i < parts.length; i++) {
    if (i >= breakAt) throw malformedStreamEvent(provider);
    if (i > 0) await pause(settings.streamDelayMs, provider, ctx.signal);
    yield parts[i];
  }
  await pause(settings.streamDelayMs, provider, ctx.signal);
  const usage = { inputTokens: answers[0].usage.inputTokens, outputTokens: answers.reduce((sum, answer) => sum + answer.usage.outputTokens, 0) };
  yield { type: 'finish', finishReason: answers[0].finishReason, usage, ...(answers.length > 1 ? { finishReasons: answers.map((answer) => answer.finishReason) } : {}) };
}

function answerParts(answer: PlannedAnswer, choice: { choice?: number }): ChatStreamPart[] {
  const parts: ChatStreamPart[] = [];
  for (const reasoning of answer.reasoning ?? []) {
    for (const delta of splitIntoDeltas(reasoning.text, 3)) parts.push({ type: 'reasoning-delta', delta, ...choice });
    parts.push({ type: 'reasoning-delta', delta: '', signature: reasoning.signature, ...choice });
  }
  if (answer.content !== null) {
    const tokenLogprobs = answer.logprobs?.content;
    if (tokenLogprobs) {
      // Whole tokens per delta, each delta carrying its tokens' log probabilities.
      const per = Math.max(1, Math.ceil(tokenLogprobs.length / 6));
      for (let i = 0; i < tokenLogprobs.length; i += per) {
        const slice = tokenLogprobs.slice(i, i + per);
        parts.push({ type: 'text-delta', delta: slice.map((t) => t.token).join(''), ...choice, logprobs: slice });
      }
    } else {
      for (const delta of splitIntoDeltas(answer.content)) parts.push({ type: 'text-delta', delta, ...choice });
    }
  }
  answer.toolCalls.forEach((call, index) => {
    parts.push({ type: 'tool-call-delta', index, id: call.id, name: call.function.name, argumentsDelta: '', ...choice });
    for (const piece of splitEvenly(call.function.arguments, 3)) parts.push({ type: 'tool-call-delta', index, argumentsDelta: piece, ...choice });
  });
  return parts;
}

function planAnswers(variant: ModelVariant, upstreamModel: string, req: ChatRequest, provider: string): PlannedAnswer[] {
  return Array.from({ length: Math.max(1, req.n ?? 1) }, (_, choice) => {
    const answer = planAnswer(variant, upstreamModel, req, provider, choice);
    if (!req.logprobs) return answer;
    const logprobs: ChatLogprobs = {
      content: answer.content === null ? null : simulatedLogprobs(answer.content, req.topLogprobs ?? 0, `${answer.upstreamId}:${choice}`),
      refusal: null,
    };
    return { ...answer, logprobs };
  });
}

function planAnswer(variant: ModelVariant, upstreamModel: string, req: ChatRequest, provider: string, choice: number): PlannedAnswer {
  const acceptsAudio = /audio/.test(variant.base);
  if (!acceptsAudio && req.messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'input_audio'))) {
    throw rejectRequest(provider, upstreamModel, `This model (${upstreamModel}) does not support audio input.`);
  }
  if (req.messages.length === 0) throw rejectRequest(provider, upstreamModel, "'messages' must contain at least one message.");
  const inputTokens = countInputTokens(req);
  const upstreamId = `simchatcmpl-${hashHex(upstreamModel, req.messages, req.tools ?? null, req.seed ?? null).slice(0, 24)}`;
  // Instructions given mid-conversation (system messages after the last turn) do not end the user's turn.
  const last = [...req.messages].reverse().find((m) => m.role !== 'system' && m.role !== 'developer') ?? req.messages[req.messages.length - 1];
  const reasoning = planReasoning(variant, upstreamModel, req, last);
  const reasoningTokens = reasoning.reduce((sum, r) => sum + countTokens(r.text), 0);
  const withReasoning = reasoning.length > 0 ? { reasoning } : {};
  const asked = askedCall(last);
  const tool = chooseTool(req, last, provider, upstreamModel, asked?.name);
  if (tool) {
    const args = (asked?.name === tool.function.name ? asked.arguments : undefined) ?? JSON.stringify(sampleFromSchema(tool.function.parameters ?? { type: 'object', properties: {} }, { text: shorten(textOf(last.content), 80) }));
    const call: ChatToolCall = { id: `call_${hashHex(upstreamId, tool.function.name).slice(0, 24)}`, type: 'function', function: { name: tool.function.name, arguments: args } };
    return { content: null, toolCalls: [call], finishReason: 'tool_calls', usage: { inputTokens, outputTokens: reasoningTokens + countTokens(tool.function.name + args) }, upstreamId, ...withReasoning };
  }
  const text = describeReply(variant, req, last, choice);
  let content = text;
  const format = req.responseFormat;
  if (format?.type === 'json_schema') {
    content = JSON.stringify(sampleFromSchema(format.json_schema.schema ?? { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] }, { text }));
  } else if (format?.type === 'json_object') {
    content = JSON.stringify({ answer: text, model: variant.base });
  }
  let finishReason: FinishReason = 'stop';
  for (const stop of req.stop ?? []) {
    const at = stop ? content.indexOf(stop) : -1;
    if (at >= 0) content = content.slice(0, at);
  }
  if (req.maxTokens !== undefined && countTokens(content) > req.maxTokens) {
    content = content.slice(0, Math.max(0, req.maxTokens) * 4);
    finishReason = 'length';
  }
  return { content, toolCalls: [], finishReason, usage: { inputTokens, outputTokens: reasoningTokens + countTokens(content) }, upstreamId, ...withReasoning };
}

/**
 * Reasoning models (`sim-reasoner`) think before they answer when the request asks them to reason: one
 * reasoning part naming the question and the effort, signed with a hash of what it says.
 */
function planReasoning(variant: ModelVariant, upstreamModel: string, req: ChatRequest, last: ChatMessage): ChatReasoning[] {
  if (!/reasoner/.test(variant.base) || !req.reasoningEffort || req.reasoningEffort === 'none') return [];
  const about = last.role === 'tool' ? 'the tool result' : quote(shorten(textOf(last.content), 80) || '(no text)');
  const text = `Simulated reasoning at ${req.reasoningEffort} effort: the question is ${about}; the conversation holds ${req.messages.length} messages.`;
  return [{ text, signature: Buffer.from(hashHex(upstreamModel, text), 'hex').toString('base64') }];
}

/** `sim:call <tool> [<json arguments>]` in the user's last message asks for a call of that tool. */
function askedCall(last: ChatMessage): { name: string; arguments?: string } | null {
  if (last.role !== 'user') return null;
  const match = /sim:call\s+([a-zA-Z0-9_-]+)(?:\s+(\{[\s\S]*\}))?/.exec(textOf(last.content));
  if (!match) return null;
  if (!match[2]) return { name: match[1] };
  try {
    return { name: match[1], arguments: JSON.stringify(JSON.parse(match[2])) };
  } catch {
    return { name: match[1] };
  }
}

/**
 * The tool to call: only when the user spoke last, no tool result came back since the assistant's last
 * turn, and tools are allowed; the forced one, else the one the user asked for (`sim:call`), else the first.
 */
function chooseTool(req: ChatRequest, last: ChatMessage, provider: string, upstreamModel: string, asked?: string): ChatTool | null {
  const tools = req.tools ?? [];
  if (tools.length === 0 || req.toolChoice === 'none' || last.role !== 'user' || toolResultsThisTurn(req.messages)) return null;
  const choice = req.toolChoice;
  const named = choice && typeof choice === 'object' ? choice.function.name : asked;
  if (named) {
    const tool = tools.find((t) => t.function.name === named);
    if (!tool) throw rejectRequest(provider, upstreamModel, `Tool '${named}' is not one of the provided tools.`);
    return tool;
  }
  return tools[0];
}

/** Whether tool results came back after the assistant's last turn (the model then answers). */
function toolResultsThisTurn(messages: ChatMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0 && messages[i].role !== 'assistant'; i--) if (messages[i].role === 'tool') return true;
  return false;
}

function describeReply(variant: ModelVariant, req: ChatRequest, last: ChatMessage, choice: number): string {
  const reference = (choice === 0 ? hashHex(variant.base, req.messages, req.seed ?? null) : hashHex(variant.base, req.messages, req.seed ?? null, choice)).slice(0, 8);
  const result = lastToolResult(req.messages);
  if (result) {
    const name = toolNameFor(req.messages, result.tool_call_id) ?? 'the tool';
    return `Based on ${name}, which returned ${quote(shorten(textOf(result.content), 160))}, here is the simulated answer (ref ${reference}).`;
  }
  const lastUser = [...req.messages].reverse().find((m) => m.role === 'user');
  const userText = lastUser ? textOf(lastUser.content) : '';
  const sentences = [`Simulated reply to ${quote(shorten(userText, 160) || '(no text)')}.`];
  const extras = lastUser && Array.isArray(lastUser.content) ? describeAttachments(lastUser.content) : [];
  if (!/mini/.test(variant.base)) {
    const words = userText.split(/\s+/).filter(Boolean).length;
    sentences.push(`Your message has ${words} ${words === 1 ? 'word' : 'words'} and ${Array.from(userText).length} characters.`);
    sentences.push(...extras);
    sentences.push(`The conversation holds ${req.messages.length} ${req.messages.length === 1 ? 'message' : 'messages'}.`);
  } else {
    sentences.push(...extras);
  }
  sentences.push(`(ref ${reference})`);
  return sentences.join(' ');
}

/** The last tool result of the current turn (after the assistant's last message), if any. */
function lastToolResult(messages: ChatMessage[]): Extract<ChatMessage, { role: 'tool' }> | null {
  for (let i = messages.length - 1; i >= 0 && messages[i].role !== 'assistant'; i--) {
    const message = messages[i];
    if (message.role === 'tool') return message;
  }
  return null;
}

function describeAttachments(parts: ChatContentPart[]): string[] {
  const out: string[] = [];
  const images = parts.filter((p): p is Extract<ChatContentPart, { type: 'image_url' }> => p.type === 'image_url');
  if (images.length > 0) {
    const described = images.map((p) => describeImage(p.image_url.url));
    out.push(`I see ${images.length} ${images.length === 1 ? 'image' : 'images'}: ${described.join('; ')}.`);
  }
  for (const part of parts) {
    if (part.type === 'input_audio') {
      const probe = probeAudio(Buffer.from(part.input_audio.data, 'base64'), { filename: `audio.${part.input_audio.format}` });
      out.push(`I heard ${probe.seconds.toFixed(1)} s of ${part.input_audio.format} audio${probe.text ? ` saying ${quote(shorten(probe.text, 160))}` : ''}.`);
    } else if (part.type === 'file') {
      out.push(`I received the file ${part.file.filename ?? part.file.file_id ?? '(unnamed)'}.`);
    }
  }
  return out;
}

function describeImage(url: string): string {
  const match = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(url);
  if (!match) {
    try {
      return `an image at ${new URL(url).host}`;
    } catch {
      return 'an image';
    }
  }
  const size = sniffImageSize(Buffer.from(match[3], match[2] ? 'base64' : 'utf8'));
  return size ? `a ${size.width}x${size.height} ${size.mediaType.replace('image/', '').toUpperCase()} image` : `an inline ${match[1] ?? 'image'}`;
}

function countInputTokens(req: ChatRequest): number {
  const texts: string[] = [];
  let extra = 0;
  for (const message of req.messages) {
    texts.push(textOf(message.content ?? ''));
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) texts.push(call.function.name + call.function.arguments);
    if (Array.isArray(message.content)) {
      for (const part of message.content) {
        if (part.type === 'image_url') extra += TOKENS_PER_IMAGE;
        if (part.type === 'input_audio') extra += Math.ceil(probeAudio(Buffer.from(part.input_audio.data, 'base64')).seconds * TOKENS_PER_AUDIO_SECOND);
      }
    }
  }
  if (req.tools?.length) texts.push(JSON.stringify(req.tools));
  if (req.responseFormat?.type === 'json_schema') texts.push(JSON.stringify(req.responseFormat.json_schema));
  return countTokens(texts.join('\n')) + extra;
}

function toolNameFor(messages: ChatMessage[], toolCallId: string): string | null {
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    const call = message.tool_calls?.find((c) => c.id === toolCallId);
    if (call) return call.function.name;
  }
  return null;
}

function textOf(content: string | ChatContentPart[] | null): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content.filter((p): p is Extract<ChatContentPart, { type: 'text' }> => p.type === 'text').map((p) => p.text).join('\n');
}

function shorten(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`;
}

function quote(text: string): string {
  return `"${text}"`;
}

/** Splits text into about `target` pieces on word boundaries (every piece non-empty). */
function splitIntoDeltas(text: string, target = 6): string[] {
  const tokens = text.match(/\S+\s*|\s+/g) ?? [];
  if (tokens.length === 0) return text ? [text] : [];
  const perPiece = Math.max(1, Math.ceil(tokens.length / target));
  const pieces: string[] = [];
  for (let i = 0; i < tokens.length; i += perPiece) pieces.push(tokens.slice(i, i + perPiece).join(''));
  return pieces;
}

/** Splits text into `count` pieces of about equal length (for JSON arguments, which have no spaces). */
function splitEvenly(text: string, count: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / count));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}
