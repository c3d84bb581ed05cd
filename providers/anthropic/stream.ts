/**
 * Turns Anthropic's streamed events (message_start, content_block_start/delta/stop, message_delta,
 * message_stop, ping, error) into the gateway's stream parts. Tool calls are numbered among tool blocks
 * only, as OpenAI clients expect; the JSON-mode tool streams as text.
 */
import { UpstreamError } from '../../core/errors';
import { classifyHttpFailure, parseSseJson, type SseEvent } from '../http';
import type { ChatStreamPart } from '../types';
import { JSON_TOOL_NAME, jsonAnswerText, type JsonToolPlan } from './json-mode';
import { mapStopReason, toTokenUsage } from './response';
import type { AnthropicStreamEvent, AnthropicUsage } from './wire';

type OpenBlock =
  | { kind: 'tool'; toolIndex: number; sentArguments: boolean }
  | { kind: 'json'; buffer: string; sentText: boolean };

export async function* translateStream(provider: string, events: AsyncIterable<SseEvent>, jsonTool: JsonToolPlan | null, opts: { passEvents?: boolean } = {}): AsyncGenerator<ChatStreamPart> {
  let usage: AnthropicUsage = {};
  let stopReason: string | null = null;
  let toolCount = 0;
  const blocks = new Map<number, OpenBlock>();

  for await (const sse of events) {
    const event = parseSseJson<AnthropicStreamEvent>(provider, sse.data);
    // The client's own request gets the upstream's own events (an error is thrown below, as for any client).
    if (opts.passEvents && event.type !== 'error') yield { type: 'anthropic-event', event: event as unknown as Record<string, unknown> };
    switch (event.type ?? sse.event) {
      case 'message_start': {
        if (event.message?.usage) usage = { ...event.message.usage };
        break;
      }
      case 'content_block_start': {
        const block = event.content_block;
        const index = event.index ?? -1;
        if (block?.type === 'text' && block.text) yield { type: 'text-delta', delta: block.text };
        if (block?.type !== 'tool_use') break;
        if (jsonTool && block.name === JSON_TOOL_NAME) {
          blocks.set(index, { kind: 'json', buffer: '', sentText: false });
          break;
        }
        const toolIndex = toolCount++;
        blocks.set(index, { kind: 'tool', toolIndex, sentArguments: false });
        yield { type: 'tool-call-delta', index: toolIndex, id: block.id, name: block.name, argumentsDelta: '' };
        break;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta?.type === 'text_delta' && delta.text) {
          yield { type: 'text-delta', delta: delta.text };
          break;
        }
        if (delta?.type !== 'input_json_delta' || !delta.partial_json) break;
        const open = blocks.get(event.index ?? -1);
        if (open?.kind === 'tool') {
          open.sentArguments = true;
          yield { type: 'tool-call-delta', index: open.toolIndex, argumentsDelta: delta.partial_json };
        } else if (open?.kind === 'json') {
          // A wrapped answer can only be unwrapped once whole; a plain one streams as it comes.
          if (jsonTool!.wrapped) open.buffer += delta.partial_json;
          else {
            open.sentText = true;
            yield { type: 'text-delta', delta: delta.partial_json };
          }
        }
        break;
      }
      case 'content_block_stop': {
        const index = event.index ?? -1;
        const open = blocks.get(index);
        blocks.delete(index);
        // A tool with no parameters streams no JSON at all; callers still expect valid arguments.
        if (open?.kind === 'tool' && !open.sentArguments) yield { type: 'tool-call-delta', index: open.toolIndex, argumentsDelta: '{}' };
        if (open?.kind === 'json') {
          if (jsonTool!.wrapped) yield { type: 'text-delta', delta: unwrapBuffered(open.buffer) };
          else if (!open.sentText) yield { type: 'text-delta', delta: '{}' };
        }
        break;
      }
      case 'message_delta':
        if (event.delta?.stop_reason) stopReason = event.delta.stop_reason;
        // Counts given here are the final ones (newer API versions repeat the input and cache counts too).
        if (event.usage) {
          for (const [key, value] of Object.entries(event.usage)) if (value !== null && value !== undefined) (usage as Record<string, unknown>)[key] = value;
        }
        break;
      case 'message_stop': {
        let finishReason = mapStopReason(stopReason);
        if (finishReason === 'tool_calls' && toolCount === 0) finishReason = 'stop';
        yield { type: 'finish', finishReason, usage: toTokenUsage(usage) };
        return;
      }
      case 'error':
        // Mid-stream errors carry the same error types as HTTP error bodies; classify them the same way.
        throw classifyHttpFailure(provider, statusForErrorType(event.error?.type), new Headers(), sse.data);
      default:
        // `ping` and event types added later are ignored, as the API's versioning policy asks.
        break;
    }
  }
  throw new UpstreamError(`${provider} ended the stream before it was complete`, { kind: 'bad_response', provider });
}

function unwrapBuffered(buffer: string): string {
  try {
    return jsonAnswerText(JSON.parse(buffer), true);
  } catch {
    return buffer; // cut short (max_tokens): hand over what came
  }
}

/** The HTTP status Anthropic documents for each error type. */
function statusForErrorType(type: string | undefined): number {
  switch (type) {
    case 'invalid_request_error': return 400;
    case 'authentication_error': return 401;
    case 'permission_error': return 403;
    case 'not_found_error': return 404;
    case 'request_too_large': return 413;
    case 'rate_limit_error': return 429;
    case 'timeout_error': return 504;
    case 'overloaded_error': return 529;
    default: return 500;
  }
}
