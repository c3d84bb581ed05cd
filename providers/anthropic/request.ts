/**
 * Builds a Messages API request from the gateway's OpenAI-shaped ChatRequest. System and developer
 * messages become the top-level `system`; tool results travel as `tool_result` blocks in a user turn;
 * consecutive turns of one role are merged because the API wants user and assistant to alternate.
 */
import { InvalidRequestError } from '../../core/errors';
import type { ChatMessage, ChatRequest, ChatTool, ChatToolCall, ChatToolChoice } from '../types';
import { contentToBlocks, contentToText } from './content';
import { JSON_TOOL_NAME, planJsonTool, type JsonToolPlan } from './json-mode';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicMessagesRequest, AnthropicTool, AnthropicToolChoice } from './wire';

export interface BuiltRequest {
  body: AnthropicMessagesRequest;
  /** Set when JSON mode is emulated through a forced tool (see json-mode.ts). */
  jsonTool: JsonToolPlan | null;
}

export function buildMessagesRequest(model: string, req: ChatRequest, defaultMaxTokens: number): BuiltRequest {
  const systemParts: string[] = [];
  const turns: AnthropicMessage[] = [];
  for (const message of req.messages) {
    if (isInstruction(message)) {
      const text = contentToText(message.content);
      if (text) systemParts.push(text);
      continue;
    }
    const turn = toTurn(message);
    if (turn.content.length === 0) continue;
    const previous = turns[turns.length - 1];
    if (previous && previous.role === turn.role) previous.content.push(...turn.content);
    else turns.push(turn);
  }

  const jsonTool = planJsonTool(req.responseFormat);
  const body: AnthropicMessagesRequest = {
    model,
    max_tokens: req.maxTokens ?? defaultMaxTokens,
    messages: turns,
  };
  if (systemParts.length > 0) body.system = systemParts.join('\n\n');

  const tools: AnthropicTool[] = (req.tools ?? []).map(toAnthropicTool);
  if (jsonTool) tools.push(jsonTool.tool);
  if (tools.length > 0) {
    body.tools = tools;
    const choice = toolChoice(req, jsonTool !== null);
    if (choice) body.tool_choice = choice;
  }

  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop && req.stop.length > 0) body.stop_sequences = req.stop;
  if (req.user) body.metadata = { user_id: req.user };
  return { body, jsonTool };
}

type InstructionMessage = Extract<ChatMessage, { role: 'system' | 'developer' }>;

function isInstruction(message: ChatMessage): message is InstructionMessage {
  return message.role === 'system' || message.role === 'developer';
}

function toTurn(message: Exclude<ChatMessage, InstructionMessage>): AnthropicMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: contentToBlocks(message.content) };
    case 'assistant': {
      const blocks = contentToBlocks(message.content);
      for (const call of message.tool_calls ?? []) blocks.push(toToolUse(call));
      return { role: 'assistant', content: blocks };
    }
    case 'tool': {
      const content = contentToBlocks(message.content);
      const block: AnthropicContentBlock = { type: 'tool_result', tool_use_id: message.tool_call_id };
      if (content.length > 0) block.content = content;
      return { role: 'user', content: [block] };
    }
  }
}

function toToolUse(call: ChatToolCall): AnthropicContentBlock {
  let input: unknown;
  try {
    input = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch {
    throw new InvalidRequestError(`tool call ${call.id} has arguments that are not JSON`, { param: 'messages', code: 'invalid_tool_call' });
  }
  return { type: 'tool_use', id: call.id, name: call.function.name, input };
}

function toAnthropicTool(tool: ChatTool): AnthropicTool {
  const out: AnthropicTool = {
    name: tool.function.name,
    input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
  };
  if (tool.function.description) out.description = tool.function.description;
  return out;
}

/**
 * With JSON mode on, the answer itself is a tool call: with no caller tools (or tool_choice `none`) we
 * force the JSON tool; with caller tools the model must call some tool, either one of theirs or the
 * JSON tool to answer.
 */
function toolChoice(req: ChatRequest, jsonMode: boolean): AnthropicToolChoice | undefined {
  const choice: ChatToolChoice | undefined = req.toolChoice;
  const hasCallerTools = (req.tools ?? []).length > 0;
  const noParallel = req.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (jsonMode && (!hasCallerTools || choice === 'none')) return { type: 'tool', name: JSON_TOOL_NAME };
  if (typeof choice === 'object') return { type: 'tool', name: choice.function.name, ...noParallel };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required' || jsonMode) return { type: 'any', ...noParallel };
  if (choice === 'auto' || req.parallelToolCalls === false) return { type: 'auto', ...noParallel };
  return undefined;
}
