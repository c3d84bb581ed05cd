/**
 * Extracts the OpenAI component schemas the schema test needs from a local copy of OpenAI's published
 * OpenAPI document (openai/openai-openapi, `openapi.json` or `openapi.yaml`), with every schema they
 * reference, as plain JSON Schema for ajv: documentation keys (`description`, `example(s)`, `title`,
 * `x-*`, `discriminator`, `deprecated`, `default`, `format`) dropped, and the properties the gateway never
 * sends (PRUNED) left out, so the vendored file stays small.
 *
 *   node dist/scripts/extract-openai-components.js path/to/openapi.json > test/schemas/openai/components.json
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** The components the schema test validates against (their references come along). */
export const WANTED = [
  'CreateChatCompletionResponse', 'CreateChatCompletionStreamResponse', 'CreateCompletionResponse', 'CreateEmbeddingResponse',
  'ImagesResponse', 'ImageGenCompletedEvent', 'ImageEditCompletedEvent', 'CreateTranscriptionResponseJson',
  'CreateTranscriptionResponseVerboseJson', 'CreateTranslationResponseJson', 'CreateTranslationResponseVerboseJson',
  'OpenAIFile', 'ListFilesResponse', 'DeleteFileResponse', 'Model', 'ListModelsResponse', 'CreateModerationResponse',
  'VideoResource', 'VideoListResource', 'DeletedVideoResource', 'ErrorResponse',
];

/** Optional properties the gateway never sends, by component (dropping them drops the schemas only they name). */
export const PRUNED: Record<string, string[]> = {
  CreateChatCompletionResponse: ['metadata', 'service_tier', 'moderation'],
  CreateChatCompletionStreamResponse: ['obfuscation', 'service_tier', 'moderation'],
  ChatCompletionResponseMessage: ['function_call', 'audio'],
  ChatCompletionStreamResponseDelta: ['audio', 'function_call'],
  CompletionUsage: ['completion_tokens_details', 'prompt_tokens_details'],
  CreateTranscriptionResponseJson: ['languages'],
};

const DOC_KEYS = new Set(['description', 'example', 'examples', 'title', 'discriminator', 'deprecated', 'default', 'format']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function extractComponents(spec: { components: { schemas: Record<string, Json> } }, wanted: string[] = WANTED): Record<string, Json> {
  const out: Record<string, Json> = {};
  const queue = [...wanted];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name in out) continue;
    const schema = spec.components.schemas[name];
    if (schema === undefined) throw new Error(`no component '${name}' in the document`);
    out[name] = clean(prune(name, schema), (ref) => queue.push(ref));
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function prune(name: string, schema: Json): Json {
  const drop = PRUNED[name];
  if (!drop || typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const properties = schema.properties as Record<string, Json> | undefined;
  if (!properties) return schema;
  return { ...schema, properties: Object.fromEntries(Object.entries(properties).filter(([key]) => !drop.includes(key))) };
}

function clean(value: Json, onRef: (name: string) => void): Json {
  if (Array.isArray(value)) return value.map((item) => clean(item, onRef));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, Json> = {};
  for (const [key, child] of Object.entries(value)) {
    if (DOC_KEYS.has(key) || key.startsWith('x-')) continue;
    if (key === '$ref' && typeof child === 'string') onRef(child.replace('#/components/schemas/', ''));
    // Property names are data, not keywords: keep them all (a property may be called `description`).
    out[key] = key === 'properties' && typeof child === 'object' && child !== null && !Array.isArray(child)
      ? Object.fromEntries(Object.entries(child).map(([name, schema]) => [name, clean(schema, onRef)]))
      : clean(child, onRef);
  }
  return out;
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: extract-openai-components <openapi.json|openapi.yaml>\n');
    process.exit(2);
  }
  const text = readFileSync(file, 'utf8');
  const spec = file.endsWith('.json') ? JSON.parse(text) : parse(text);
  const schemas = extractComponents(spec);
  process.stdout.write(`${JSON.stringify({ $id: 'https://github.com/openai/openai-openapi/openapi.json', components: { schemas } }, null, 1)}\n`);
}
