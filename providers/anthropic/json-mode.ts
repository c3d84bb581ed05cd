/**
 * JSON mode for a provider without a response-format flag. We emulate `json_object` and `json_schema` with
 * a forced tool: the schema becomes the tool's `input_schema`, tool_choice forces that tool, and the
 * tool's input is returned to the caller as the answer's text. This was chosen over "system instruction +
 * `{` prefill" because the tool input is validated against the schema by the model's tool-use training,
 * it never carries prose around the JSON, and it works on models that refuse assistant prefill.
 *
 * Tool inputs must be objects, so a schema whose top level is not an object is wrapped as
 * `{ value: <schema> }` and unwrapped on the way back.
 */
import type { ChatResponseFormat } from '../types';
import type { AnthropicTool } from './wire';

export const JSON_TOOL_NAME = 'json_response';

export interface JsonToolPlan {
  tool: AnthropicTool;
  /** True when the caller's schema sits under `value` inside the tool input. */
  wrapped: boolean;
}

export function planJsonTool(format: ChatResponseFormat | undefined): JsonToolPlan | null {
  if (!format || format.type === 'text') return null;
  const description = 'Give your final answer by calling this tool; its input is the answer, as JSON.';
  if (format.type === 'json_object') {
    return { tool: { name: JSON_TOOL_NAME, description, input_schema: { type: 'object' } }, wrapped: false };
  }
  const schema = format.json_schema.schema ?? { type: 'object' };
  const detail = format.json_schema.description ? ` ${format.json_schema.description}` : '';
  const isObject = schema.type === 'object';
  return {
    tool: {
      name: JSON_TOOL_NAME,
      description: description + detail,
      input_schema: isObject ? schema : { type: 'object', properties: { value: schema }, required: ['value'] },
    },
    wrapped: !isObject,
  };
}

/** The JSON text returned to the caller for the tool's input. */
export function jsonAnswerText(input: unknown, wrapped: boolean): string {
  const value = wrapped && input && typeof input === 'object' ? (input as Record<string, unknown>).value : input;
  return JSON.stringify(value ?? {});
}
