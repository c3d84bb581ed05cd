/**
 * A Responses request's input as conversation items: a string becomes one user message, every item gets an
 * id (the client's, or one derived from the request id), content strings become parts, and each item is
 * checked for what its type needs. Items are stored like this and listed by `GET .../input_items`.
 */
import { InvalidRequestError } from '../../core/errors';
import type { ResponseItem } from '../../domain/responses';
import type { ResponsesContentPart, ResponsesInputItem } from './body';

/** Ids of a request's response and items: stable for the request, so a retried call answers the same ids. */
export function responseIds(requestId: string) {
  const hex = requestId.replace(/-/g, '');
  return {
    response: `resp_${hex}`,
    input: (prefix: 'msg' | 'fc' | 'fco', index: number) => `${prefix}_${hex}i${index}`,
    output: (prefix: 'msg' | 'fc', index: number) => `${prefix}_${hex}o${index}`,
  };
}

/** Which keys each item type takes (the schema allows the union of them). */
const ITEM_KEYS: Record<string, string[]> = {
  message: ['type', 'id', 'status', 'role', 'content'],
  function_call: ['type', 'id', 'status', 'call_id', 'name', 'arguments'],
  function_call_output: ['type', 'id', 'status', 'call_id', 'output'],
  item_reference: ['type', 'id'],
};

const PART_KEYS: Record<ResponsesContentPart['type'], string[]> = {
  input_text: ['type', 'text'],
  input_image: ['type', 'image_url', 'file_id', 'detail'],
  input_file: ['type', 'file_id', 'file_data', 'file_url', 'filename'],
  output_text: ['type', 'text', 'annotations', 'logprobs'],
  refusal: ['type', 'refusal'],
};

function invalid(param: string, message: string, code = 'invalid_value'): InvalidRequestError {
  return new InvalidRequestError(message, { param, code });
}

function requireString(value: unknown, param: string): string {
  if (typeof value !== 'string') throw new InvalidRequestError(`Missing required parameter: '${param}'.`, { param, code: 'missing_required_parameter' });
  return value;
}

function onlyKeys(object: object, allowed: string[], param: string, what: string): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) throw invalid(`${param}.${key}`, `Unrecognized parameter '${param}.${key}': ${what} do not take '${key}'.`, 'unknown_parameter');
  }
}

function normalizePart(part: ResponsesContentPart, role: string, param: string): ResponsesContentPart {
  onlyKeys(part, PART_KEYS[part.type], param, `'${part.type}' parts`);
  const assistant = role === 'assistant';
  if (assistant !== (part.type === 'output_text' || part.type === 'refusal')) {
    throw invalid(`${param}.type`, `Invalid value for '${param}.type': ${assistant ? "assistant messages hold 'output_text' and 'refusal' parts" : `${role} messages hold 'input_text', 'input_image' and 'input_file' parts`}, not '${part.type}'.`);
  }
  if ((role === 'system' || role === 'developer') && part.type !== 'input_text') {
    throw invalid(`${param}.type`, `Invalid value for '${param}.type': ${role} messages hold 'input_text' parts only, not '${part.type}'.`);
  }
  switch (part.type) {
    case 'input_text':
      return { type: 'input_text', text: requireString(part.text, `${param}.text`) };
    case 'output_text':
      return { type: 'output_text', text: requireString(part.text, `${param}.text`), annotations: [] };
    case 'refusal':
      return { type: 'refusal', refusal: requireString(part.refusal, `${param}.refusal`) };
    case 'input_image': {
      const url = part.image_url ?? null;
      const fileId = part.file_id ?? null;
      if ((url === null) === (fileId === null)) throw invalid(param, `Invalid '${param}': an input_image needs exactly one of 'image_url' and 'file_id'.`);
      return { type: 'input_image', detail: part.detail ?? 'auto', ...(url !== null ? { image_url: url } : { file_id: fileId }) };
    }
    case 'input_file': {
      if (part.file_url !== undefined) {
        throw invalid(`${param}.file_url`, `'file_url' is not supported by this gateway: upload the file (POST /v1/files) and send its 'file_id', or send 'file_data'.`, 'unsupported_parameter');
      }
      if (part.file_id) return { type: 'input_file', file_id: part.file_id, ...(part.filename ? { filename: part.filename } : {}) };
      if (part.file_data !== undefined) return { type: 'input_file', file_data: part.file_data, filename: requireString(part.filename, `${param}.filename`) };
      throw invalid(param, `Invalid '${param}': an input_file needs 'file_id' or 'file_data'.`);
    }
  }
}

function normalizeContent(content: unknown, role: string, param: string): ResponsesContentPart[] {
  if (typeof content === 'string') return [role === 'assistant' ? { type: 'output_text', text: content, annotations: [] } : { type: 'input_text', text: content }];
  if (!Array.isArray(content)) throw new InvalidRequestError(`Missing required parameter: '${param}'.`, { param, code: 'missing_required_parameter' });
  return content.map((part, j) => normalizePart(part, role, `${param}[${j}]`));
}

function normalizeToolOutput(output: unknown, param: string): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) throw new InvalidRequestError(`Missing required parameter: '${param}'.`, { param, code: 'missing_required_parameter' });
  return output.map((part: ResponsesContentPart, j) => {
    if (part.type !== 'input_text') {
      throw invalid(`${param}[${j}].type`, `Function call outputs with '${part.type}' parts are not supported by this gateway: send the output as text.`, 'unsupported_parameter');
    }
    return requireString(part.text, `${param}[${j}].text`);
  }).join('');
}

/**
 * The request's input as items with ids. `references` maps the ids of `item_reference` items to the
 * stored items (the caller looked them up; a missing one is a 404 there).
 */
export function inputItems(input: string | ResponsesInputItem[], requestId: string, references: Map<string, ResponseItem>): ResponseItem[] {
  const ids = responseIds(requestId);
  if (typeof input === 'string') {
    return [{ id: ids.input('msg', 0), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: input }] }];
  }
  return input.map((item, i) => {
    const param = `input[${i}]`;
    const type = item.type ?? 'message';
    onlyKeys(item, ITEM_KEYS[type], param, `'${type}' items`);
    switch (type) {
      case 'item_reference':
        return references.get(requireString(item.id, `${param}.id`))!;
      case 'function_call':
        return {
          id: item.id ?? ids.input('fc', i), type, status: 'completed',
          call_id: requireString(item.call_id, `${param}.call_id`), name: requireString(item.name, `${param}.name`), arguments: requireString(item.arguments, `${param}.arguments`),
        };
      case 'function_call_output':
        return { id: item.id ?? ids.input('fco', i), type, status: 'completed', call_id: requireString(item.call_id, `${param}.call_id`), output: normalizeToolOutput(item.output, `${param}.output`) };
      default: {
        const role = requireString(item.role, `${param}.role`);
        return { id: item.id ?? ids.input('msg', i), type: 'message', role, status: 'completed', content: normalizeContent(item.content, role, `${param}.content`) };
      }
    }
  });
}

/** Ids named by `item_reference` items, with where they are named. */
export function itemReferences(input: string | ResponsesInputItem[]): Array<{ id: string; param: string }> {
  if (typeof input === 'string') return [];
  return input.flatMap((item, i) => (item.type === 'item_reference' ? [{ id: requireString(item.id, `input[${i}].id`), param: `input[${i}].id` }] : []));
}

/** Uploaded files named by id in the items (`input_image` and `input_file` parts), with where they are named. */
export function itemFileIds(items: ResponseItem[], paramOf: (itemIndex: number, partIndex: number) => string): Array<{ fileId: string; param: string }> {
  const refs: Array<{ fileId: string; param: string }> = [];
  items.forEach((item, i) => {
    if (item.type !== 'message' || !Array.isArray(item.content)) return;
    (item.content as ResponsesContentPart[]).forEach((part, j) => {
      if ((part.type === 'input_image' || part.type === 'input_file') && typeof part.file_id === 'string') refs.push({ fileId: part.file_id, param: paramOf(i, j) });
    });
  });
  return refs;
}
