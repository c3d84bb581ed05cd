/**
 * Builds a generateContent request from the gateway's OpenAI-shaped ChatRequest: system and developer
 * messages become `systemInstruction`, turns become user/model contents (consecutive turns of one role
 * merged), tool results become `functionResponse` parts named after the call they answer.
 */
import { InvalidRequestError } from '../../core/errors';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool, ChatToolCall } from '../types';
import { audioMediaType, guessMediaType, parseDataUrl } from './media';
import { requiresThoughtSignatures, signatureFromToolCallId, SKIP_SIGNATURE_VALIDATION } from './tool-call-ids';
import type { GeminiContent, GeminiFunctionDeclaration, GeminiGenerateContentRequest, GeminiGenerationConfig, GeminiPart } from './wire';

export function buildGenerateContentRequest(model: string, req: ChatRequest): GeminiGenerateContentRequest {
  const system: string[] = [];
  const contents: GeminiContent[] = [];
  const toolNames = new Map<string, string>();

  for (const message of req.messages) {
    if (isInstruction(message)) {
      const text = textOf(message.content);
      if (text) system.push(text);
      continue;
    }
    const content = toContent(message, toolNames, requiresThoughtSignatures(model));
    if (content.parts.length === 0) continue;
    const previous = contents[contents.length - 1];
    if (previous && previous.role === content.role) previous.parts.push(...content.parts);
    else contents.push(content);
  }

  const body: GeminiGenerateContentRequest = { contents };
  if (system.length > 0) body.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  if (req.tools && req.tools.length > 0) {
    body.tools = [{ functionDeclarations: req.tools.map(toDeclaration) }];
    const toolConfig = toToolConfig(req.toolChoice);
    if (toolConfig) body.toolConfig = toolConfig;
  }
  const generationConfig = toGenerationConfig(model, req);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return body;
}

type InstructionMessage = Extract<ChatMessage, { role: 'system' | 'developer' }>;

function isInstruction(message: ChatMessage): message is InstructionMessage {
  return message.role === 'system' || message.role === 'developer';
}

function toContent(message: Exclude<ChatMessage, InstructionMessage>, toolNames: Map<string, string>, signatures: boolean): GeminiContent {
  switch (message.role) {
    case 'user':
      return { role: 'user', parts: toParts(message.content) };
    case 'assistant': {
      const parts = toParts(message.content);
      const calls = (message.tool_calls ?? []).map((call) => {
        toolNames.set(call.id, call.function.name);
        return toFunctionCallPart(call);
      });
      if (signatures && calls.length > 0 && !calls.some((part) => part.thoughtSignature)) calls[0].thoughtSignature = SKIP_SIGNATURE_VALIDATION;
      return { role: 'model', parts: [...parts, ...calls] };
    }
    case 'tool': {
      const name = toolNames.get(message.tool_call_id);
      if (!name) {
        throw new InvalidRequestError(`tool message answers tool_call_id ${message.tool_call_id}, which no earlier assistant message called`, {
          param: 'messages', code: 'unknown_tool_call_id',
        });
      }
      return { role: 'user', parts: [{ functionResponse: { name, response: toFunctionResponse(textOf(message.content)) } }] };
    }
  }
}

function toFunctionCallPart(call: ChatToolCall): GeminiPart {
  let args: unknown;
  try {
    args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch {
    throw new InvalidRequestError(`tool call ${call.id} has arguments that are not JSON`, { param: 'messages', code: 'invalid_tool_call' });
  }
  const part: GeminiPart = { functionCall: { name: call.function.name, args: isRecord(args) ? args : { value: args } } };
  const signature = signatureFromToolCallId(call.id);
  if (signature) part.thoughtSignature = signature;
  return part;
}

/**
 * `response` must be an object. Google's convention is `output` for a result (and `error` for a
 * failure); a result that is already a JSON object is passed as it is.
 */
function toFunctionResponse(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) return parsed;
  } catch { /* plain text */ }
  return { output: text };
}

function toParts(content: string | ChatContentPart[] | null): GeminiPart[] {
  if (content == null || content === '') return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.flatMap((part): GeminiPart[] => {
    switch (part.type) {
      case 'text':
        return part.text === '' ? [] : [{ text: part.text }];
      case 'image_url': {
        const url = part.image_url.url;
        const inline = parseDataUrl(url);
        if (inline) return [{ inlineData: { mimeType: inline.mediaType, data: inline.base64 } }];
        if (/^https?:\/\//i.test(url)) return [{ fileData: { mimeType: guessMediaType(url, 'image/jpeg'), fileUri: url } }];
        throw new InvalidRequestError('image_url must be an http(s) URL or a base64 data: URL', { param: 'messages', code: 'invalid_image_url' });
      }
      case 'input_audio':
        return [{ inlineData: { mimeType: audioMediaType(part.input_audio.format), data: part.input_audio.data } }];
      case 'file': {
        const data = part.file.file_data;
        if (!data) throw new InvalidRequestError('This model takes files only as inline data (file_data)', { param: 'messages', code: 'unsupported_file' });
        const inline = parseDataUrl(data);
        if (inline) return [{ inlineData: { mimeType: inline.mediaType, data: inline.base64 } }];
        return [{ inlineData: { mimeType: guessMediaType(part.file.filename ?? '', 'application/pdf'), data } }];
      }
    }
  });
}

function toDeclaration(tool: ChatTool): GeminiFunctionDeclaration {
  const declaration: GeminiFunctionDeclaration = { name: tool.function.name };
  if (tool.function.description) declaration.description = tool.function.description;
  if (tool.function.parameters) declaration.parametersJsonSchema = tool.function.parameters;
  return declaration;
}

function toToolConfig(choice: ChatRequest['toolChoice']): GeminiGenerateContentRequest['toolConfig'] {
  if (choice === undefined) return undefined;
  if (typeof choice === 'object') return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  const mode = choice === 'required' ? 'ANY' : choice === 'none' ? 'NONE' : 'AUTO';
  return { functionCallingConfig: { mode } };
}

/** OpenAI's reasoning_effort as Google's own OpenAI-compatible endpoint maps it onto Gemini 2.5 budgets. */
const THINKING_BUDGETS: Record<string, number> = { none: 0, minimal: 0, low: 1024, medium: 8192, high: 24576 };

function thinkingConfig(model: string, effort: string): GeminiGenerationConfig['thinkingConfig'] {
  if (/gemini-3/.test(model)) return { thinkingLevel: effort === 'high' ? 'high' : 'low' };
  const budget = THINKING_BUDGETS[effort];
  if (budget === undefined) throw new InvalidRequestError(`reasoning_effort '${effort}' has no Gemini equivalent`, { param: 'reasoning_effort', code: 'invalid_value' });
  return { thinkingBudget: budget };
}

function toGenerationConfig(model: string, req: ChatRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  if (req.maxTokens !== undefined) config.maxOutputTokens = req.maxTokens;
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.topP !== undefined) config.topP = req.topP;
  if (req.stop && req.stop.length > 0) config.stopSequences = req.stop;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.presencePenalty !== undefined) config.presencePenalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) config.frequencyPenalty = req.frequencyPenalty;
  if (req.reasoningEffort !== undefined) config.thinkingConfig = thinkingConfig(model, req.reasoningEffort);
  const format = req.responseFormat;
  if (format && format.type !== 'text') {
    config.responseMimeType = 'application/json';
    if (format.type === 'json_schema' && format.json_schema.schema) config.responseJsonSchema = format.json_schema.schema;
  }
  return config;
}

function textOf(content: string | ChatContentPart[] | null): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.filter((p): p is { type: 'text'; text: string } => p.type === 'text').map((p) => p.text).join('\n');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
